//go:build linux

package checkpoint_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestRewindHonoursAgentDenyRules: package agent's deny rule on
// write_file's path holds for a rewind (nothing written), and a rewind
// that touches only allowed paths goes through.
func TestRewindHonoursAgentDenyRules(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"src/a.go": "package a\n", "secret/key": "k1"})
	tools, err := codetools.New(root)
	require.NoError(t, err)
	defer tools.Close()
	perms, err := agent.New(agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "write_file", Argument: "path", Glob: "secret/**"}}})
	require.NoError(t, err)
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root, checkpoint.WithAllow(checkpoint.AllowThrough(perms.Guard(checkpoint.Probe(tools)), "write_file")))
	require.NoError(t, err)
	cp, err := c.Save(ctx, checkpoint.KindManual, "")
	require.NoError(t, err)
	keyInfo, err := os.Stat(filepath.Join(root, "secret/key"))
	require.NoError(t, err)

	writeFiles(t, root, map[string]string{"src/a.go": "package b\n", "secret/key": "k2"})
	before := treeDigest(t, root)
	_, err = c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	require.ErrorIs(t, err, checkpoint.ErrDenied)
	assert.Contains(t, err.Error(), "secret/key")
	assert.Equal(t, before, treeDigest(t, root))

	// Put the denied file back as it was, time and all (setting its time
	// would be a write there too).
	require.NoError(t, os.WriteFile(filepath.Join(root, "secret/key"), []byte("k1"), 0o644))
	require.NoError(t, os.Chtimes(filepath.Join(root, "secret/key"), keyInfo.ModTime(), keyInfo.ModTime()))
	r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	require.NoError(t, err)
	assert.True(t, r.Exact)
	data, err := os.ReadFile(filepath.Join(root, "src/a.go"))
	require.NoError(t, err)
	assert.Equal(t, "package a\n", string(data))
}
