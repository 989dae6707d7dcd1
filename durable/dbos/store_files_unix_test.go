//go:build unix

package dbos

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreFilesOwnerOnly (issue 35, row 15): under umask 022, an Engine
// on SQLite creates its database, the database's -wal and -shm files and
// the executor lock 0600, although the database holds a sensitive
// argument's value (before: runs.db was 0644, readable by every user).
func TestStoreFilesOwnerOnly(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	dir := filepath.Join(t.TempDir(), "state") // missing: created too
	db := filepath.Join(dir, "runs.db")
	const secret = "hunter2-very-secret"
	login := llmtoolkit.MustTool("login", "logs in", map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}}})
	login.SensitiveFields = []string{"password"}
	agentFn := func(context.Context, Run) (agentloop.SendFunc, agentloop.Options, error) {
		send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			if msgs[len(msgs)-1].Role == agentloop.RoleTool {
				return agentloop.Response{Content: "logged in"}, nil
			}
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "l1", Name: "login", Arguments: map[string]any{"password": secret}}}}, nil
		}
		resolve := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil })
		return send, agentloop.Options{Resolver: llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{login})}, nil
	}
	e := newEngine(t, "sqlite:"+db, agentFn)
	res, err := e.Run(context.Background(), "run-1", Input{Messages: []agentloop.Message{agentloop.UserMessage("log in")}})
	require.NoError(t, err)
	require.NoError(t, res.Err())
	files, err := filepath.Glob(filepath.Join(dir, "*"))
	require.NoError(t, err)
	names := map[string]bool{}
	for _, f := range files {
		info, err := os.Stat(f)
		require.NoError(t, err)
		name := filepath.Base(f)
		names[name] = true
		if info.IsDir() {
			continue
		}
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "%s", name)
	}
	assert.True(t, names["runs.db"] && names["runs.db-wal"] && names["runs.db-shm"], "the database and its WAL files, as seen: %v", names)
	assert.Len(t, names, 4, "and the executor lock: %v", names)
	info, err := os.Stat(dir)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o700), info.Mode().Perm(), "the folder it made")
	require.NoError(t, e.Shutdown(5*time.Second))
}
