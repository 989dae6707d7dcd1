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
	require.NoError(t, reg.AddWorktree(w))
	c, err := NewCopy(ctx, newFolder(t), filepath.Join(t.TempDir(), "cp"), CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, reg.AddCopy(c))
	kept, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "kept"), "sub-kept")
	require.NoError(t, err)
	require.NoError(t, reg.AddWorktree(kept))
	require.NoError(t, reg.Forget(kept.Dir), "kept: no longer the registry's")
	n, err := reg.Sweep(ctx)
	require.NoError(t, err)
	assert.Zero(t, n, "this process still runs: its workspaces are left alone")
	assert.DirExists(t, w.Dir)
	orphan(t, reg)

	n, err = reg.Sweep(ctx)
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
	n, err = reg.Sweep(ctx)
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
