//go:build linux

package checkpoint_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
)

// TestToolsSeeOnlyTheirConversation: checkpoint_list and checkpoint_rewind
// through Execute; a call of one conversation neither lists nor rewinds to
// another's checkpoint; a rewind shows its diff and is undoable.
func TestToolsSeeOnlyTheirConversation(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	writeFiles(t, root, map[string]string{"a": "1"})
	store, err := checkpoint.NewStore(openSQLite(t))
	require.NoError(t, err)
	c, err := checkpoint.New(store, root)
	require.NoError(t, err)
	tenant := uuid.NewString()
	conv := func(id string) context.Context {
		return llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": tenant, "conversation_id": id} })
	}
	mine, theirs := conv(uuid.NewString()), conv(uuid.NewString())
	cpMine, err := c.Save(mine, checkpoint.KindTurn, "")
	require.NoError(t, err)
	writeFiles(t, root, map[string]string{"a": "2", "b": "new"})
	cpTheirs, err := c.Save(theirs, checkpoint.KindTurn, "")
	require.NoError(t, err)

	tools := checkpoint.Tools(c)
	res := llmtoolkit.Execute(mine, tools, llmtoolkit.Call{ID: "1", Name: "checkpoint_list", Arguments: map[string]any{}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, cpMine.ID)
	assert.NotContains(t, res.Content, cpTheirs.ID)

	res = llmtoolkit.Execute(mine, tools, llmtoolkit.Call{ID: "2", Name: "checkpoint_rewind", Arguments: map[string]any{"id": cpTheirs.ID}})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "another conversation")

	res = llmtoolkit.Execute(mine, tools, llmtoolkit.Call{ID: "3", Name: "checkpoint_rewind", Arguments: map[string]any{"id": cpMine.ID, "dryRun": true}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, `"changes":2`)
	require.NotNil(t, res.Display)
	assert.Equal(t, checkpoint.DisplayCheckpoint, res.Display.Kind)
	data, err := json.Marshal(res.Display.Payload)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"oldMode"`)
	assert.Contains(t, string(data), `"path":"b"`)

	res = llmtoolkit.Execute(mine, tools, llmtoolkit.Call{ID: "4", Name: "checkpoint_rewind", Arguments: map[string]any{"id": cpMine.ID}})
	require.False(t, res.IsError, res.Content)
	var out struct {
		Before string `json:"before"`
		Exact  bool   `json:"exact"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Content), &out))
	assert.True(t, out.Exact)
	d, err := c.Display(ctx, out.Before, cpMine.ID)
	require.NoError(t, err)
	assert.Len(t, d.Payload.(checkpoint.DiffPayload).Changes, 2)
}
