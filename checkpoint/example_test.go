//go:build linux

package checkpoint_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
)

// A checkpoint before a change, and a rewind that takes the change back.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	root := filepath.Join(dir, "work")
	_ = os.MkdirAll(root, 0o755)
	_ = os.WriteFile(filepath.Join(root, "notes.txt"), []byte("before\n"), 0o644)

	db, err := checkpoint.OpenSQLite(filepath.Join(dir, "checkpoints.db"))
	if err != nil {
		panic(err)
	}
	store, _ := checkpoint.NewStore(db)
	c, _ := checkpoint.New(store, root)
	cp, err := c.Save(ctx, checkpoint.KindTurn, "")
	if err != nil {
		panic(err)
	}

	_ = os.WriteFile(filepath.Join(root, "notes.txt"), []byte("after\n"), 0o644)
	_ = os.WriteFile(filepath.Join(root, "new.txt"), []byte("new\n"), 0o644)

	r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	if err != nil {
		panic(err)
	}
	for _, ch := range r.Changes {
		fmt.Println(ch.Op, ch.Path)
	}
	data, _ := os.ReadFile(filepath.Join(root, "notes.txt"))
	fmt.Print(string(data))
	_, err = os.Stat(filepath.Join(root, "new.txt"))
	fmt.Println(os.IsNotExist(err), r.Exact)
	// Output:
	// removed new.txt
	// modified notes.txt
	// before
	// true true
}
