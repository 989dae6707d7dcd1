//go:build unix

package confine_test

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// TestOpenRefusesPipesWithoutBlocking: a named pipe is refused, for
// reading and for writing, at once (a blocking open would wait for a
// writer or a reader forever).
func TestOpenRefusesPipesWithoutBlocking(t *testing.T) {
	r, dir, _ := newRoot(t)
	require.NoError(t, syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644))
	done := make(chan [2]error, 1)
	go func() {
		_, _, rerr := r.Open("pipe", "pipe", confine.Either)
		_, _, werr := r.OpenIn(r.FS, "pipe", "pipe", os.O_WRONLY, 0, confine.File)
		done <- [2]error{rerr, werr}
	}()
	select {
	case errs := <-done:
		assert.ErrorContains(t, errs[0], "named pipe")
		assert.ErrorContains(t, errs[1], "named pipe")
	case <-time.After(10 * time.Second):
		// Release the blocked opens before failing.
		if f, err := os.OpenFile(filepath.Join(dir, "pipe"), os.O_RDWR, 0); err == nil {
			defer f.Close()
		}
		t.Fatal("an open blocked on a named pipe")
	}
}

func TestLinkCount(t *testing.T) {
	_, dir, _ := newRoot(t)
	write(t, dir, "a", "x")
	info, err := os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	n, ok := confine.LinkCount(info)
	require.True(t, ok)
	assert.Equal(t, uint64(1), n)
	require.NoError(t, os.Link(filepath.Join(dir, "a"), filepath.Join(dir, "b")))
	info, err = os.Stat(filepath.Join(dir, "a"))
	require.NoError(t, err)
	n, _ = confine.LinkCount(info)
	assert.Equal(t, uint64(2), n)
}
