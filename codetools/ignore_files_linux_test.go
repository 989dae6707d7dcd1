package codetools

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// mknodZero makes path a character device like /dev/zero (endless zeros).
func mknodZero(path string) error {
	return unix.Mknod(path, unix.S_IFCHR|0o644, int(unix.Mkdev(1, 5)))
}

// TestReadIgnoreFileAtChecksDescriptor: the walker's reader refuses what
// it opens if it is not a regular file (a pipe swapped in after the
// listing does not block it), and never follows a link.
func TestReadIgnoreFileAtChecksDescriptor(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, mkfifo(filepath.Join(dir, "pipe")))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "file"), []byte("*.o\n"), 0o644))
	require.NoError(t, os.Symlink("file", filepath.Join(dir, "link")))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "folder"), 0o755))
	d, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	require.NoError(t, err)
	defer unix.Close(d)

	done := make(chan struct{})
	go func() {
		defer close(done)
		_, err := readIgnoreFileAt(d, "pipe", "sub/pipe")
		assert.ErrorIs(t, err, errIgnoreNotRegular)
		assert.ErrorContains(t, err, "sub/pipe")
		_, err = readIgnoreFileAt(d, "folder", "folder")
		assert.ErrorIs(t, err, errIgnoreNotRegular)
		_, err = readIgnoreFileAt(d, "link", "link")
		assert.ErrorIs(t, err, errIgnoreLink)
		data, err := readIgnoreFileAt(d, "file", "file")
		assert.NoError(t, err)
		assert.Equal(t, "*.o\n", string(data))
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("reading the ignore files still blocked after 10s")
	}
}
