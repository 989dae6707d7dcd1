package codetools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// makeChain makes a chain of depth nested folders named "d" below dir, with
// a file "f" of 1 byte at the bottom, one openat step at a time: the whole
// path is longer than PATH_MAX. It returns the chain's top.
func makeChain(t testing.TB, dir string, depth int) string {
	t.Helper()
	top := filepath.Join(dir, "chain")
	require.NoError(t, os.Mkdir(top, 0o755))
	r, err := os.OpenRoot(top)
	require.NoError(t, err)
	for range depth - 1 {
		require.NoError(t, r.Mkdir("d", 0o755))
		sub, err := r.OpenRoot("d")
		require.NoError(t, err)
		require.NoError(t, r.Close())
		r = sub
	}
	require.NoError(t, r.WriteFile("f", []byte("x"), 0o644))
	require.NoError(t, r.Close())
	t.Cleanup(func() { removeChain(t, top) })
	return top
}

// removeChain removes a chain made by makeChain one level at a time:
// os.RemoveAll holds a descriptor per level and runs out of them.
func removeChain(t testing.TB, top string) {
	r, err := os.OpenRoot(top)
	require.NoError(t, err)
	defer r.Close()
	for {
		if _, err := r.Lstat("d/d"); err != nil {
			break
		}
		require.NoError(t, r.Rename("d/d", "up"))
		require.NoError(t, r.Remove("d"))
		require.NoError(t, r.Rename("up", "d"))
	}
	require.NoError(t, os.RemoveAll(top))
}

// TestTreeDeepChainLinear: tree walks a 5,000-deep chain (30,000 with
// LLMTOOLKIT_STRESS) with folder handles, one open per folder, not one open
// of the whole path per folder (quadratic: 220 s at depth 5,000, hours at
// 30,000). The deadline makes a quadratic walk fail instead of stalling the
// run.
func TestTreeDeepChainLinear(t *testing.T) {
	if testing.Short() {
		t.Skip("makes a 5,000-deep chain")
	}
	depth := 5_000
	if stress() {
		depth = 30_000
	}
	dir, c := newTestTools(t)
	makeChain(t, dir, depth)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	began := time.Now()
	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "tree", Arguments: map[string]any{"path": "chain"}})
	took := time.Since(began)
	require.NoError(t, err)
	t.Logf("tree over a %d-deep chain: %v", depth, took)
	assert.Contains(t, out, "chain/ (1B)")
	assert.Contains(t, out, fmt.Sprintf("d/ (1B, %d more inside)", depth-3))
	assert.Contains(t, out, "3 directories, 0 files")
	assert.Less(t, took, 30*time.Second)
}

// BenchmarkTreeDeepChain: tree over chains of growing depth, to show the
// growth (linear with folder handles).
func BenchmarkTreeDeepChain(b *testing.B) {
	for _, depth := range []int{5_000, 10_000, 30_000} {
		b.Run(fmt.Sprint(depth), func(b *testing.B) {
			dir, c := newTestTools(b)
			makeChain(b, dir, depth)
			b.ResetTimer()
			for b.Loop() {
				mustRun(b, c, "tree", map[string]any{"path": "chain"})
			}
		})
	}
}

// makeComb makes a comb of depth levels below dir/comb: level i holds a
// file fi, a leaf folder "b" with a file, and the next level "a", which
// sorts first, so every folder still has a subfolder to visit while the
// walk is below it.
func makeComb(t testing.TB, dir string, depth int) string {
	t.Helper()
	top := filepath.Join(dir, "comb")
	p := top
	for i := range depth {
		require.NoError(t, os.MkdirAll(filepath.Join(p, "b"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(p, fmt.Sprintf("f%d", i)), []byte(strings.Repeat("x", i)), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(p, "b", "leaf"), []byte("y"), 0o644))
		p = filepath.Join(p, "a")
	}
	return top
}

// TestTreeHandleLimit: over a comb, where every folder above the walk still
// has a subfolder to visit, tree keeps at most treeMaxHandles folders open,
// reopens the others from the nearest open one, and draws the same tree as
// with room for all of them.
func TestTreeHandleLimit(t *testing.T) {
	dir, c := newTestTools(t)
	const depth = 40
	makeComb(t, dir, depth)
	args := map[string]any{"path": "comb", "depth": 2 * depth, "limit": 10 * depth}
	want := mustRun(t, c, "tree", args)
	assert.Contains(t, want, fmt.Sprintf("%d directories, %d files", 2*depth-1, 2*depth)) // a/ at 39 levels, b/ at 40

	saved := treeMaxHandles
	defer func() { treeMaxHandles = saved }()
	for _, limit := range []int{3, 4, 7} {
		treeMaxHandles = limit
		before := openDescriptors(t)
		got := mustRun(t, c, "tree", args)
		assert.Equal(t, want, got, "limit %d", limit)
		if before >= 0 {
			assert.Equal(t, before, openDescriptors(t), "no folder left open")
		}
	}
}

// TestTreeOutputCapped: drawn whole, a deep chain makes each line longer
// than the one above (2,000 levels gave 8 MB, 30,000 would give 1.8 GB):
// the drawing stops at treeMaxBytes, with a notice.
func TestTreeOutputCapped(t *testing.T) {
	t.Parallel()
	const depth = 2_000
	dir, c := newTestTools(t)
	makeChain(t, dir, depth)
	out := mustRun(t, c, "tree", map[string]any{"path": "chain", "depth": 2 * depth, "limit": 2 * depth})
	assert.LessOrEqual(t, len(out), treeMaxBytes+300)
	assert.Regexp(t, `\[Output cut at 64(\.0)?KB after \d+ of 2000 entries\. Use a smaller depth or limit, or call tree on a subfolder\.\]$`, out)
	assert.NotContains(t, out, "Entry limit")

	out = mustRun(t, c, "tree", map[string]any{"path": "chain", "depth": 50, "limit": 20})
	assert.Contains(t, out, "[Entry limit 20 reached", "the entry limit still comes first when it is lower")
}
