//go:build linux

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// TestCheckpointsCommand: save, list, diff, a dry run, a refused rewind
// (--deny), a rewind and its undo, collect.
func TestCheckpointsCommand(t *testing.T) {
	root := t.TempDir()
	db := filepath.Join(t.TempDir(), "cp.db")
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("K=1\n"), 0o600))
	res := runBin(t, "", "checkpoints", "save", "--db", db, "--root", root)
	require.Equal(t, 0, res.code, res.stderr)
	first := strings.TrimSpace(res.stdout)
	info, err := os.Stat(db)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm())

	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "new\nline"), []byte("x"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, ".env"), []byte("K=2\n"), 0o600))
	res = runBin(t, "", "checkpoints", "save", "--db", db, "--root", root)
	require.Equal(t, 0, res.code, res.stderr)
	second := strings.TrimSpace(res.stdout)

	res = runBin(t, "", "checkpoints", "--db", db, "--root", root)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, first)
	assert.Less(t, strings.Index(res.stdout, second), strings.Index(res.stdout, first), "newest first")

	res = runBin(t, "", "checkpoints", "diff", "--db", db, "--root", root, first, second)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "modified a.txt (file)")
	assert.Contains(t, res.stdout, `added    "new\nline" (file)`, "a name cannot forge a line")

	res = runBin(t, "", "checkpoints", "rewind", "--db", db, "--root", root, "--deny", ".env", first)
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "denied by --deny .env")
	data, _ := os.ReadFile(filepath.Join(root, "a.txt"))
	assert.Equal(t, "two\n", string(data), "a refused rewind writes nothing")

	res = runBin(t, "", "checkpoints", "rewind", "--db", db, "--root", root, "--dry-run", first)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "dry run: 3 changes")

	res = runBin(t, "", "checkpoints", "rewind", "--db", db, "--root", root, first)
	require.Equal(t, 0, res.code, res.stderr)
	data, _ = os.ReadFile(filepath.Join(root, "a.txt"))
	assert.Equal(t, "one\n", string(data))
	undo := res.stdout[strings.LastIndex(res.stdout, " ")+1:]
	res = runBin(t, "", "checkpoints", "rewind", "--db", db, "--root", root, strings.TrimSpace(undo))
	require.Equal(t, 0, res.code, res.stderr)
	data, _ = os.ReadFile(filepath.Join(root, "a.txt"))
	assert.Equal(t, "two\n", string(data), "undone")

	res = runBin(t, "", "checkpoints", "collect", "--db", db)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Contains(t, res.stdout, "removed")

	res = runBin(t, "", "checkpoints", "--db", filepath.Join(t.TempDir(), "none.db"))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "no checkpoint database")
}

// TestMCPCheckpointTools: the checkpoint tools are served only when asked
// for; with them a client lists the checkpoint taken before its own edit
// and rewinds the edit.
func TestMCPCheckpointTools(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*mcpTimeout)
	defer cancel()
	for _, withTools := range []bool{false, true} {
		dir := projectDir(t)
		args := []string{"mcp", "--root", dir, "--checkpoint-db", filepath.Join(t.TempDir(), "cp.db")}
		if withTools {
			args = append(args, "--checkpoint-tools")
		}
		client, err := mcp.Connect(ctx, mcp.CommandTransport(exec.Command(bin, args...)))
		require.NoError(t, err)
		_, served := llmtoolkit.FindTool(client, "checkpoint_rewind")
		assert.Equal(t, withTools, served)
		if withTools {
			res := llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "changed\n"}})
			require.False(t, res.IsError, res.Content)
			res = llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "checkpoint_list", Arguments: map[string]any{}})
			require.False(t, res.IsError, res.Content)
			lines := strings.Split(strings.TrimSpace(res.Content), "\n")
			require.Len(t, lines, 1, "one checkpoint, before write_file (the checkpoint tools are not checkpointed)")
			id := strings.Fields(lines[0])[0]
			res = llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "checkpoint_rewind", Arguments: map[string]any{"id": id}})
			require.False(t, res.IsError, res.Content)
			data, err := os.ReadFile(filepath.Join(dir, "a.txt"))
			require.NoError(t, err)
			assert.Contains(t, string(data), "hello from a")
		}
		require.NoError(t, client.Close())
	}
}
