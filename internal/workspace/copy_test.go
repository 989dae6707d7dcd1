package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFolder(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(mainGo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "other.txt"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.log"), []byte("skipped\n"), 0o644))
	return root
}

// TestTwoCopiesEditTheSameFunction: the worktree proof in copy mode, on a
// folder without git: both diffs, the first applies (three ways, beside
// an unrelated change the parent made meanwhile), the second reports its
// conflict and writes nothing; no copy is left.
func TestTwoCopiesEditTheSameFunction(t *testing.T) {
	ctx := context.Background()
	root := newFolder(t)
	skip := func(rel string) bool { return strings.HasSuffix(rel, ".log") }
	var copies []*Copy
	for i, word := range []string{"hola", "bonjour"} {
		c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"+string(rune('a'+i))), Limits{MaxFiles: 100, MaxBytes: 1 << 20}, skip)
		require.NoError(t, err)
		assert.NoFileExists(t, filepath.Join(c.Dir, "big.log"), "host-excluded paths are not copied")
		copies = append(copies, c)
		edited := strings.Replace(mainGo, `"hello"`, `"`+word+`"`, 1)
		require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "main.go"), []byte(edited), 0o644))
		d, err := c.Diff(ctx)
		require.NoError(t, err)
		assert.Contains(t, d, `+	return "`+word+`"`)
		assert.Contains(t, d, "a/main.go")
	}
	// The parent changes another line meanwhile: the merge keeps both.
	parentEdit := strings.Replace(mainGo, "func main() { println(greet()) }", "func main() { print(greet()) }", 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(parentEdit), 0o644))

	require.NoError(t, copies[0].Apply(ctx, nil))
	want := strings.Replace(parentEdit, `"hello"`, `"hola"`, 1)
	err := copies[1].Apply(ctx, nil)
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "main.go")
	got, err := os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "exactly the applied change, merged with the parent's")
	for _, c := range copies {
		require.NoError(t, c.Remove())
		assert.NoDirExists(t, filepath.Dir(c.Dir))
	}
}

// TestCopyBounded: a folder past the limits is refused and nothing of
// the copy is left.
func TestCopyBounded(t *testing.T) {
	root := newFolder(t)
	dir := filepath.Join(t.TempDir(), "ws")
	_, err := NewCopy(context.Background(), root, dir, Limits{MaxFiles: 1}, nil)
	require.ErrorIs(t, err, ErrTooBig)
	assert.NoDirExists(t, dir)
}

// TestKilledMidEditLeavesTheParentUntouched: a sub-agent's copy half
// edited and then discarded (removed) leaves the parent as it was.
func TestKilledMidEditLeavesTheParentUntouched(t *testing.T) {
	ctx := context.Background()
	root := newFolder(t)
	c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"), Limits{}, nil)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "main.go"), []byte("package main\n// half"), 0o644))
	require.NoError(t, c.Remove())
	got, err := os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, mainGo, string(got))
	assert.NoDirExists(t, filepath.Dir(c.Dir))
}
