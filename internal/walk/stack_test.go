package walk_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// makeComb makes a comb of depth levels below dir/comb: level i holds a
// file fi, a leaf folder "b" with a file, and the next level "a", so every
// folder still has a subfolder to visit while the walk is below it.
func makeComb(t testing.TB, dir string, depth int) {
	t.Helper()
	p := filepath.Join(dir, "comb")
	for i := range depth {
		require.NoError(t, os.MkdirAll(filepath.Join(p, "b"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(p, fmt.Sprintf("f%d", i)), []byte(strings.Repeat("x", i)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(p, "b", "leaf"), []byte("y"), 0o644))
		p = filepath.Join(p, "a")
	}
}

// TestStackStaysUnderLimit drives a Stack down a comb as tree does and
// checks that it never holds more than Limit handles and that a reopened
// level is the right folder.
func TestStackStaysUnderLimit(t *testing.T) {
	r, dir := newRoot(t)
	const depth = 30
	makeComb(t, dir, depth)
	before := openDescriptors()

	top, err := walk.OpenStart(r, "comb", "comb")
	require.NoError(t, err)
	s := walk.Stack{Limit: 5}
	s.Push("", top)
	for level := range depth - 1 { // down the "a" spine, every level kept
		d, err := s.Get(level)
		require.NoError(t, err)
		sub, err := d.OpenSub("a")
		require.NoError(t, err)
		s.Push("a", sub)
		assert.LessOrEqual(t, s.Held(), s.Limit)
	}
	for level := depth - 1; level >= 0; level-- { // back up, visiting each "b"
		d, err := s.Get(level)
		require.NoError(t, err, "level %d", level)
		assert.LessOrEqual(t, s.Held(), s.Limit)
		size, err := d.Size(fmt.Sprintf("f%d", level))
		require.NoError(t, err, "level %d is the right folder", level)
		assert.Equal(t, int64(level), size)
		b, err := d.OpenSub("b")
		require.NoError(t, err)
		b.Close()
		if level > 0 {
			s.Pop()
		}
	}
	assert.Equal(t, 1, s.Held(), "only the top is left")
	s.CloseAll()
	assert.Zero(t, s.Held())
	if before >= 0 {
		assert.Equal(t, before, openDescriptors(), "no folder left open")
	}
}

// TestStackDropKeepsTwoOnAChain: dropping a folder's handle once its last
// subfolder is open keeps a chain at two handles, and a dropped level is
// reopened on demand.
func TestStackDropKeepsTwoOnAChain(t *testing.T) {
	r, dir := newRoot(t)
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "c", "c", "c", "c"), 0o755))
	top, err := walk.OpenStart(r, ".", ".")
	require.NoError(t, err)
	var s walk.Stack
	defer s.CloseAll()
	s.Push("", top)
	for level := range 4 {
		d, err := s.Get(level)
		require.NoError(t, err)
		sub, err := d.OpenSub("c")
		require.NoError(t, err)
		if level > 0 {
			s.Drop(level)
		}
		s.Push("c", sub)
		assert.LessOrEqual(t, s.Held(), 2)
	}
	d, err := s.Get(2) // dropped: reopened from the top
	require.NoError(t, err)
	_, err = d.Size("c")
	require.NoError(t, err)
}
