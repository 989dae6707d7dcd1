package walk_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// visited walks start and returns the Rel of every file visited, sorted.
func visited(t *testing.T, w *walk.Walker, start string) []string {
	t.Helper()
	var (
		mu  sync.Mutex
		got []string
	)
	require.NoError(t, w.Walk(context.Background(), start, func(worker int, f walk.File) {
		assert.Less(t, worker, walk.Workers())
		rc, err := f.Dir.Open(f.Name)
		if assert.NoError(t, err, f.Rel) {
			rc.Close()
		}
		mu.Lock()
		got = append(got, f.Rel)
		mu.Unlock()
	}))
	sort.Strings(got)
	return got
}

func TestWalkHonoursIgnoreFilesAndExclusions(t *testing.T) {
	r, dir := newRoot(t)
	write(t, dir, map[string]string{
		".gitignore":           "*.log\nbuild/\n",
		"a.go":                 "",
		"a.log":                "",
		"build/out.go":         "",
		".git/config":          "",
		"sub/.gitignore":       "*.tmp\n!keep.log\n",
		"sub/b.go":             "",
		"sub/b.tmp":            "",
		"sub/keep.log":         "",
		"sub/deep/c.tmp":       "",
		"sub/deep/c.go":        "",
		"secret/key":           "",
		"other/secret/key.txt": "",
	})
	if err := os.Symlink("a.go", filepath.Join(dir, "link.go")); err != nil {
		t.Log("no symbolic links:", err)
	}
	excludedCalls := atomic.Int64{}
	w := &walk.Walker{Root: r, Go: guarded, Excluded: func(rel string) bool {
		excludedCalls.Add(1)
		return rel == "secret" || strings.HasSuffix(rel, "/secret")
	}}
	assert.Equal(t, []string{".gitignore", "a.go", "sub/.gitignore", "sub/b.go", "sub/deep/c.go", "sub/keep.log"}, visited(t, w, "."))
	assert.Positive(t, excludedCalls.Load())

	// From a subfolder, the rules of the folders above still apply.
	assert.Equal(t, []string{"sub/deep/c.go"}, visited(t, w, filepath.FromSlash("sub/deep")))

	// A start that is left out visits nothing.
	assert.Empty(t, visited(t, w, "secret"))

	// Without exclusions, the excluded folders are walked.
	all := visited(t, &walk.Walker{Root: r, Go: guarded}, ".")
	assert.True(t, slices.Contains(all, "secret/key") && slices.Contains(all, "other/secret/key.txt"), "%v", all)
}

func TestWalkStartMustBeAFolder(t *testing.T) {
	r, dir := newRoot(t)
	write(t, dir, map[string]string{"file": "x"})
	w := &walk.Walker{Root: r, Go: guarded}
	err := w.Walk(context.Background(), "file", func(int, walk.File) {})
	require.ErrorContains(t, err, "not a directory: file")
	err = w.Walk(context.Background(), "missing", func(int, walk.File) {})
	require.ErrorContains(t, err, "file not found: missing")
}

// TestWalkPanicStopsTheWalk: a panic in the visitor comes back through the
// guard as the walk's error, the walk stops, and no folder stays open.
func TestWalkPanicStopsTheWalk(t *testing.T) {
	r, dir := newRoot(t)
	files := map[string]string{}
	for i := range 200 {
		files[filepath.ToSlash(filepath.Join("d"+string(rune('a'+i%7)), "f"+string(rune('a'+i%26))+strings.Repeat("x", i)))] = "x"
	}
	write(t, dir, files)
	w := &walk.Walker{Root: r, Go: guarded}
	before := openDescriptors()
	var n atomic.Int64
	err := w.Walk(context.Background(), ".", func(int, walk.File) {
		if n.Add(1) == 10 {
			panic("boom")
		}
	})
	require.ErrorContains(t, err, "panic: boom")
	assert.Less(t, n.Load(), int64(len(files)), "the walk stopped")
	if before >= 0 {
		assert.Equal(t, before, openDescriptors(), "no folder left open")
	}
}

func TestWalkCancelled(t *testing.T) {
	r, dir := newRoot(t)
	write(t, dir, map[string]string{"a/b": "", "c": ""})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var n atomic.Int64
	err := (&walk.Walker{Root: r, Go: guarded}).Walk(ctx, ".", func(int, walk.File) { n.Add(1) })
	require.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, n.Load())
}
