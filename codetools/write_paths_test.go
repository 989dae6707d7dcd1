package codetools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWritePathNamingAFolderRefused: a path that can only name a folder
// (a trailing separator, a last element "." or "..") is refused by every
// write tool, with an error that says so, and nothing is written.
func TestWritePathNamingAFolderRefused(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "exists.txt", "SECRET\n")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, tt := range []struct{ path, ending string }{
		{"a/", "/"},
		{"sub/new/", "/"},
		{"exists.txt/", "/"},
		{"sub/x/.", "."},
		{"sub/x/..", ".."},
	} {
		for name, args := range fileTools {
			if name == "read_file" || name == "list_directory" || name == "tree" || name == "file_info" {
				continue
			}
			_, err := run(t, c, name, withPath(args, tt.path))
			require.Error(t, err, "%s %q", name, tt.path)
			assert.Contains(t, err.Error(), "names a folder (it ends with \""+tt.ending+"\"), not a file", "%s %q", name, tt.path)
		}
	}
	assert.NoFileExists(t, filepath.Join(dir, "a"))
	assert.NoDirExists(t, filepath.Join(dir, "sub", "new"))
	assert.NoFileExists(t, filepath.Join(dir, "sub", "x"))
	assert.Equal(t, "SECRET\n", readTestFile(t, dir, "exists.txt"))
}

// TestWriteToolsLongNames: every write tool handles names of 234 to 255
// bytes (the temporary file's name does not grow with the target's).
func TestWriteToolsLongNames(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	for _, n := range []int{233, 234, 250, 255} {
		name := strings.Repeat("n", n-4) + ".txt"
		mustRun(t, c, "write_file", map[string]any{"path": name, "content": "one SECRET\n"})
		mustRun(t, c, "edit_file", map[string]any{"path": name, "oldText": "one", "newText": "two"})
		mustRun(t, c, "multi_edit", map[string]any{"path": name, "edits": []any{map[string]any{"oldText": "two", "newText": "three"}}})
		mustRun(t, c, "append_to_file", map[string]any{"path": name, "content": "four\n"})
		mustRun(t, c, "write_file", map[string]any{"path": "sub/" + name, "content": "x"})
		assert.Equal(t, "three SECRET\nfour\n", readTestFile(t, dir, name), "%d-byte name", n)
	}
	requireNoTempFiles(t, dir)
}

// TestWriteFolderSwapLeavesNoTemporaryFile swaps the folder being written
// in for a link (to the outside, then back) while the write tools write in
// it, for a bounded time: no temporary file is ever left, inside the root
// or outside, and nothing outside is written.
func TestWriteFolderSwapLeavesNoTemporaryFile(t *testing.T) {
	t.Parallel()
	root, outside, c := outsideSetup(t)
	sub := filepath.Join(root, "sub")
	writeTestFile(t, root, "sub/f.txt", "inside SECRET\n")

	stop := make(chan struct{})
	var swapper sync.WaitGroup
	swapper.Add(1)
	go func() {
		defer swapper.Done()
		real := filepath.Join(root, "sub-real")
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := os.Rename(sub, real); err != nil {
				continue
			}
			_ = os.Symlink(outside, sub)
			_ = os.Remove(sub)
			_ = os.Rename(real, sub)
		}
	}()
	stopSwapper := sync.OnceFunc(func() { close(stop); swapper.Wait() })
	t.Cleanup(stopSwapper)

	names := []string{"write_file", "edit_file", "multi_edit"}
	var wg sync.WaitGroup
	deadline := time.Now().Add(1500 * time.Millisecond)
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; time.Now().Before(deadline); i++ {
				name := names[(g+i)%len(names)]
				args := withPath(fileTools[name], "sub/f.txt")
				// write_file resets what edit_file and multi_edit change.
				switch name {
				case "write_file":
					args["content"] = "inside SECRET\n"
				case "edit_file":
					args["oldText"], args["newText"] = "inside", "INSIDE"
				case "multi_edit":
					args["edits"] = []any{map[string]any{"oldText": "INSIDE", "newText": "inside"}}
				}
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				_, _ = c.Resolve(ctx, llmtoolkit.Call{Name: name, Arguments: args})
				cancel()
			}
		}()
	}
	wg.Wait()
	stopSwapper()
	requireNoTempFiles(t, root)
	requireNoTempFiles(t, outside)
	assert.Equal(t, "SECRET\n", readTestFile(t, outside, "secret.txt"), "the outside file was never written")
	entries, err := os.ReadDir(outside)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "nothing created outside")
}
