package workspace

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestMeasureWorkspaces times making and removing a workspace of each
// mode on the repository LLMTOOLKIT_WORKSPACE_REPO names (bench/workspace.sh
// sets it: a git repository holding the Go source tree), ROUNDS times,
// and prints the medians and the disk a copy uses. Skipped without it.
func TestMeasureWorkspaces(t *testing.T) {
	repo := os.Getenv("LLMTOOLKIT_WORKSPACE_REPO")
	if repo == "" {
		t.Skip("LLMTOOLKIT_WORKSPACE_REPO is not set (bench/workspace.sh sets it)")
	}
	rounds, _ := strconv.Atoi(os.Getenv("ROUNDS"))
	rounds = max(rounds, 1)
	ctx := context.Background()
	med := func(d []time.Duration) float64 {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return d[len(d)/2].Seconds()
	}
	var wtMake, wtRemove, cpMake, cpRemove []time.Duration
	var disk int64
	cloned := 0
	for r := range rounds {
		dir := filepath.Join(filepath.Dir(repo), fmt.Sprintf("ws-%d", r))
		t0 := time.Now()
		w, err := NewWorktree(ctx, repo, dir+"-wt", fmt.Sprintf("measure-%d", r))
		require.NoError(t, err)
		t1 := time.Now()
		require.NoError(t, w.Remove(ctx))
		wtMake, wtRemove = append(wtMake, t1.Sub(t0)), append(wtRemove, time.Since(t1))

		t0 = time.Now()
		c, err := NewCopy(ctx, repo, dir+"-cp", Limits{}, nil)
		require.NoError(t, err)
		t1 = time.Now()
		disk, cloned = du(t, filepath.Dir(c.Dir)), c.Cloned
		require.NoError(t, c.Remove())
		cpMake, cpRemove = append(cpMake, t1.Sub(t0)), append(cpRemove, time.Since(t1))
	}
	fmt.Printf("%-10s %10.3f %10.3f %14s\n", "Worktree", med(wtMake), med(wtRemove), "-")
	fmt.Printf("%-10s %10.3f %10.3f %14d  (work + base; %d files cloned)\n", "Copy", med(cpMake), med(cpRemove), disk/1024, cloned)
}

// du returns the apparent size of the regular files under dir.
func du(t *testing.T, dir string) int64 {
	var n int64
	require.NoError(t, filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return err
	}))
	return n
}
