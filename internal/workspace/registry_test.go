package workspace

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSweepRemovesWhatACrashLeft: a worktree and a copy recorded and never
// removed (the process died) are removed by the next start's Sweep, the
// worktree's branch too; git lists no stale worktree.
func TestSweepRemovesWhatACrashLeft(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	reg := Registry{Dir: filepath.Join(t.TempDir(), "registry")}
	w, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "wt"), "sub-crashed")
	require.NoError(t, err)
	require.NoError(t, reg.AddWorktree(w, ""))
	c, err := NewCopy(ctx, newFolder(t), filepath.Join(t.TempDir(), "cp"), CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, reg.AddCopy(c, ""))
	kept, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "kept"), "sub-kept")
	require.NoError(t, err)
	require.NoError(t, reg.AddWorktree(kept, ""))
	require.NoError(t, reg.Forget(kept.Dir), "kept: no longer the registry's")
	n, err := reg.Sweep(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, n, "this process still runs: its workspaces are left alone")
	assert.DirExists(t, w.Dir)
	orphan(t, reg)

	n, err = reg.Sweep(ctx, nil)
	require.NoError(t, err)
	assert.Equal(t, 2, n)
	assert.NoDirExists(t, w.Dir)
	assert.NoDirExists(t, filepath.Dir(c.Dir))
	assert.DirExists(t, kept.Dir)
	list := run(t, repo, "worktree", "list", "--porcelain")
	assert.Equal(t, 2, strings.Count(list, "worktree "), list)
	assert.NotContains(t, run(t, repo, "branch", "--list"), "sub-crashed")
	entries, err := os.ReadDir(reg.Dir)
	require.NoError(t, err)
	assert.Empty(t, entries)
	n, err = reg.Sweep(ctx, nil)
	require.NoError(t, err)
	assert.Zero(t, n, "idempotent")
}

// orphan rewrites every record of reg as made by a process that has
// ended (a child that exited), as a crash leaves them.
func orphan(t *testing.T, reg Registry) {
	t.Helper()
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	entries, err := os.ReadDir(reg.Dir)
	require.NoError(t, err)
	for _, e := range entries {
		p := filepath.Join(reg.Dir, e.Name())
		b, err := os.ReadFile(p)
		require.NoError(t, err)
		var rec record
		require.NoError(t, json.Unmarshal(b, &rec))
		require.Equal(t, os.Getpid(), rec.PID)
		rec.PID, rec.Start = cmd.Process.Pid, "1"
		b, err = json.Marshal(rec)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(p, b, 0o600))
	}
}

// TestSweepKeepsWhatARunMayResume: the workspaces of a dead process made
// for a durable run stay while the run may resume (mayResume nil, true,
// or failing) and Reopen gives them back, edits and all, to the next
// process; once the run may not resume, Sweep removes them.
func TestSweepKeepsWhatARunMayResume(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	reg := Registry{Dir: filepath.Join(t.TempDir(), "registry")}
	wtDir := filepath.Join(t.TempDir(), "wt")
	w, err := NewWorktree(ctx, repo, wtDir, "sub-durable")
	require.NoError(t, err)
	require.NoError(t, reg.AddWorktree(w, "run-1"))
	root := newFolder(t)
	cpDir := filepath.Join(t.TempDir(), "cp")
	c, err := NewCopy(ctx, root, cpDir, CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, reg.AddCopy(c, "run-1"))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "edited.txt"), []byte("w\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "edited.txt"), []byte("c\n"), 0o644))
	orphan(t, reg)

	for _, tc := range []struct {
		name      string
		mayResume func(context.Context, string) (bool, error)
	}{
		{"nil", nil},
		{"true", func(context.Context, string) (bool, error) { return true, nil }},
		{"failing", func(context.Context, string) (bool, error) { return false, assert.AnError }},
	} {
		n, err := reg.Sweep(ctx, tc.mayResume)
		require.NoError(t, err, tc.name)
		assert.Zero(t, n, tc.name)
		assert.DirExists(t, wtDir, tc.name)
		assert.DirExists(t, cpDir, tc.name)
	}

	_, _, err = reg.Reopen(wtDir, "worktree", "run-2", "", CopyOptions{})
	require.Error(t, err, "another run's workspace")
	wt, _, err := reg.Reopen(wtDir, "worktree", "run-1", "", CopyOptions{})
	require.NoError(t, err)
	require.NotNil(t, wt)
	d, err := wt.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, "+w")
	_, cp, err := reg.Reopen(cpDir, "copy", "run-1", root, CopyOptions{})
	require.NoError(t, err)
	require.NotNil(t, cp)
	d, err = cp.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, "+c")
	wt2, cp2, err := reg.Reopen(filepath.Join(t.TempDir(), "none"), "copy", "run-1", root, CopyOptions{})
	require.NoError(t, err)
	assert.Nil(t, wt2)
	assert.Nil(t, cp2, "no record: nothing to reopen")

	orphan(t, reg)
	n, err := reg.Sweep(ctx, func(_ context.Context, runID string) (bool, error) { return runID != "run-1", nil })
	require.NoError(t, err)
	assert.Equal(t, 2, n, "the run ended: its workspaces go")
	assert.NoDirExists(t, wtDir)
	assert.NoDirExists(t, cpDir)
	assert.NotContains(t, run(t, repo, "branch", "--list"), "sub-durable")
}
