package atomicfile

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFileCreatesAndReplaces(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	require.NoError(t, WriteFile(root, "a.txt", []byte("one"), 0o644))
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one", string(got))

	require.NoError(t, os.Chmod(filepath.Join(dir, "a.txt"), 0o750))
	require.NoError(t, WriteFile(root, "a.txt", []byte("two"), 0o644))
	got, err = os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "two", string(got))
	info, err := os.Stat(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o750), info.Mode().Perm(), "mode kept")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file left behind")
}

func TestWriteFileInSubfolderAndErrors(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	require.NoError(t, WriteFile(root, filepath.Join("sub", "b.txt"), []byte("x"), 0o600))
	info, err := os.Stat(filepath.Join(dir, "sub", "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, int64(1), info.Size())

	assert.Error(t, WriteFile(root, "missing/c.txt", []byte("x"), 0o644), "folder must exist")
	assert.Error(t, WriteFile(root, "sub", []byte("x"), 0o644), "a folder is not replaced")
	assert.Error(t, WriteFile(root, "../escape.txt", []byte("x"), 0o644), "os.Root confines")
	_, err = os.Stat(filepath.Join(filepath.Dir(dir), "escape.txt"))
	assert.True(t, os.IsNotExist(err))
}

func TestWriteFileConcurrentReadersSeeWholeContent(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	a, b := make([]byte, 64<<10), make([]byte, 64<<10)
	for i := range a {
		a[i], b[i] = 'a', 'b'
	}
	require.NoError(t, WriteFile(root, "f", a, 0o644))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range 50 {
			data := a
			if i%2 == 1 {
				data = b
			}
			assert.NoError(t, WriteFile(root, "f", data, 0o644))
		}
	}()
	for range 200 {
		got, err := os.ReadFile(filepath.Join(dir, "f"))
		require.NoError(t, err)
		require.Len(t, got, len(a))
		assert.True(t, got[0] == got[len(got)-1], "never a mix of old and new")
	}
	wg.Wait()
}
