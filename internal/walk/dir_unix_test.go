//go:build unix

package walk_test

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// within runs fn and fails the test if it blocks (on a named pipe) for 10
// seconds, releasing the pipe first.
func within(t *testing.T, pipe, name string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(pipe, os.O_RDWR, 0); err == nil {
			time.AfterFunc(time.Second, func() { f.Close() })
		}
		t.Fatalf("%s blocked on a named pipe", name)
		return nil
	}
}

// TestDirOpensRefuseSpecialFiles: the walkers' opens of a folder entry
// never block on a named pipe (one swapped in after the listing is what
// they meet) and check the type on the descriptor: a pipe is refused as a
// file, as a folder, as an ignore file and as the start.
func TestDirOpensRefuseSpecialFiles(t *testing.T) {
	r, dir := newRoot(t)
	pipe := filepath.Join(dir, "pipe")
	require.NoError(t, syscall.Mkfifo(pipe, 0o644))
	write(t, dir, map[string]string{"file.txt": "x"})
	d, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	defer d.Close()

	err = within(t, pipe, "Open", func() error {
		f, err := d.Open("pipe")
		if err == nil {
			f.Close()
		}
		return err
	})
	assert.Error(t, err, "open of a pipe as a file")
	err = within(t, pipe, "OpenSub", func() error {
		s, err := d.OpenSub("pipe")
		if err == nil {
			s.Close()
		}
		return err
	})
	assert.Error(t, err, "open of a pipe as a folder")
	err = within(t, pipe, "OpenSub of a file", func() error {
		s, err := d.OpenSub("file.txt")
		if err == nil {
			s.Close()
		}
		return err
	})
	assert.Error(t, err, "open of a file as a folder")
	err = within(t, pipe, "ReadIgnore", func() error {
		_, err := d.ReadIgnore("pipe", "sub/pipe")
		return err
	})
	assert.ErrorIs(t, err, walk.ErrIgnoreNotRegular)
	assert.ErrorContains(t, err, "sub/pipe")
	err = within(t, pipe, "OpenStart", func() error {
		s, err := walk.OpenStart(r, "pipe", "pipe")
		if err == nil {
			s.Close()
		}
		return err
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "named pipe")
	f, err := d.Open("file.txt")
	require.NoError(t, err, "a regular file opens")
	require.NoError(t, f.Close())
}

// TestOpenOneNameRefusesHardLinks: OpenOneName refuses a file with a
// second name, counted on the opened descriptor, with confine.ErrLinked;
// Open still opens it, and a file with one name opens either way.
func TestOpenOneNameRefusesHardLinks(t *testing.T) {
	r, dir := newRoot(t)
	write(t, dir, map[string]string{"one.txt": "x", "two.txt": "y"})
	if err := os.Link(filepath.Join(dir, "two.txt"), filepath.Join(dir, "other.txt")); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	d, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	defer d.Close()
	_, err = d.OpenOneName("two.txt")
	require.ErrorIs(t, err, confine.ErrLinked)
	assert.ErrorContains(t, err, "2 names")
	for _, open := range []func(string) (io.ReadCloser, error){d.Open, d.OpenOneName} {
		f, err := open("one.txt")
		require.NoError(t, err)
		require.NoError(t, f.Close())
	}
	f, err := d.Open("two.txt")
	require.NoError(t, err)
	require.NoError(t, f.Close())
}
