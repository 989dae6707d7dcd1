//go:build linux

package checkpoint_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// TestToolsOverMCP: a server the host gives checkpoint.Tools (no tool set
// has them otherwise: off by default) exposes checkpoint_list and
// checkpoint_rewind; a remote agent, through the
// official SDK's client, lists the checkpoints, dry-runs a rewind and
// rewinds.
func TestToolsOverMCP(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a": "1"})
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root)
	require.NoError(t, err)
	cp, err := c.Save(ctx, checkpoint.KindTurn, "")
	require.NoError(t, err)
	writeFiles(t, root, map[string]string{"a": "2", "b": "new"})

	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(checkpoint.Tools(c)).Connect(ctx, st, nil)
	require.NoError(t, err)
	defer ss.Close()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	defer cs.Close()
	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
	}
	assert.ElementsMatch(t, []string{"checkpoint_list", "checkpoint_rewind"}, names)

	text := func(name string, args map[string]any) string {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
		require.NoError(t, err)
		require.NotEmpty(t, res.Content)
		tc, ok := res.Content[0].(*sdk.TextContent)
		require.True(t, ok)
		require.False(t, res.IsError, tc.Text)
		return tc.Text
	}
	assert.Contains(t, text("checkpoint_list", map[string]any{}), cp.ID)
	assert.Contains(t, text("checkpoint_rewind", map[string]any{"id": cp.ID, "dryRun": true}), `"changes":2`)
	assert.Equal(t, "2", readFile(t, root, "a"), "a dry run writes nothing")
	var out struct {
		Exact bool `json:"exact"`
	}
	require.NoError(t, json.Unmarshal([]byte(text("checkpoint_rewind", map[string]any{"id": cp.ID})), &out))
	assert.True(t, out.Exact)
	assert.Equal(t, "1", readFile(t, root, "a"))
	assert.NoFileExists(t, filepath.Join(root, "b"))

}

func readFile(t *testing.T, root, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, name))
	require.NoError(t, err)
	return string(data)
}
