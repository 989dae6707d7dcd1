//go:build unix

package atomicfile

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteFileRefusesSpecialFiles: a named pipe, a socket or a folder is
// never replaced by a regular file, and no temporary file is left.
func TestWriteFileRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	require.NoError(t, err)
	defer l.Close()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	for _, tt := range []struct{ name, kind string }{
		{"pipe", "named pipe"},
		{"sock", "socket"},
		{"folder", "directory"},
	} {
		before, err := os.Lstat(filepath.Join(dir, tt.name))
		require.NoError(t, err)
		err = WriteFile(root, tt.name, []byte("x"), 0o644)
		require.Error(t, err, tt.name)
		assert.True(t, errors.Is(err, ErrNotRegular), "%s: %v", tt.name, err)
		assert.EqualError(t, err, tt.name+" is a "+tt.kind+": not a regular file")
		after, err := os.Lstat(filepath.Join(dir, tt.name))
		require.NoError(t, err)
		assert.Equal(t, before.Mode().Type(), after.Mode().Type(), "%s kept its type", tt.name)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 3, "no temporary file left")
}
