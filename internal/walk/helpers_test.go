package walk_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

var errOutside = errors.New("outside the working directory")

// newRoot returns a confine.Root over a fresh folder, and the folder.
func newRoot(t testing.TB) (*confine.Root, string) {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	fsroot, err := os.OpenRoot(dir)
	require.NoError(t, err)
	t.Cleanup(func() { fsroot.Close() })
	return &confine.Root{FS: fsroot, Dir: dir, Outside: errOutside}, dir
}

// write makes the files, slash-separated names relative to dir.
func write(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
}

// guarded is the goroutine guard the tests give the walker: a panic comes
// back as an error.
func guarded(_ string, fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer close(done)
		defer func() {
			if v := recover(); v != nil {
				done <- fmt.Errorf("panic: %v", v)
			}
		}()
		done <- fn()
	}()
	return done
}

// openDescriptors counts the process's open descriptors (-1 where
// /proc/self/fd does not exist).
func openDescriptors() int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}
