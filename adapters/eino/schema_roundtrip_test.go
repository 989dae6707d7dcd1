package eino_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

// TestSchemaRoundTripCodeTools checks that every code tool's JSON Schema
// comes back byte for byte from eino's ToolInfo (as eino hands it to a chat
// model, through ToJSONSchema), and again after a trip back into llmtoolkit.
func TestSchemaRoundTripCodeTools(t *testing.T) {
	ctx := context.Background()
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	defs := ct.Tools()
	require.Len(t, defs, 12)

	tools, err := eino.Tools(ctx, ct)
	require.NoError(t, err)
	require.Len(t, tools, 12)
	for i, def := range defs {
		t.Run(def.Name, func(t *testing.T) {
			want, err := json.Marshal(def.Parameters)
			require.NoError(t, err)

			info, err := tools[i].Info(ctx)
			require.NoError(t, err)
			assert.Equal(t, def.Name, info.Name)
			assert.Equal(t, def.Description, info.Desc)
			js, err := info.ParamsOneOf.ToJSONSchema()
			require.NoError(t, err)
			sent, err := json.Marshal(js)
			require.NoError(t, err)
			assert.JSONEq(t, string(want), string(sent), "the schema eino sends")
			var m map[string]any
			require.NoError(t, json.Unmarshal(sent, &m))
			got, err := json.Marshal(m)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(got), "byte-identical after the trip into eino")

			back, err := eino.FromToolInfo(info)
			require.NoError(t, err)
			again, err := json.Marshal(back.Parameters)
			require.NoError(t, err)
			assert.Equal(t, string(want), string(again), "byte-identical after the trip back")
			assert.Equal(t, def.Name, back.Name)
			assert.Equal(t, def.Description, back.Description)
		})
	}
}

// TestToolInfoRefusesSchemaEinoWouldChange: a keyword eino's jsonschema type
// does not model is refused by name rather than silently dropped.
func TestToolInfoRefusesSchemaEinoWouldChange(t *testing.T) {
	tl, err := llmtoolkit.NewTool("t", "a tool", map[string]any{
		"type":       "object",
		"properties": map[string]any{"a": map[string]any{"type": "string"}},
		"x-note":     "kept by llmtoolkit, dropped by eino",
	})
	require.NoError(t, err)
	_, err = eino.ToolInfo(tl)
	require.ErrorIs(t, err, eino.ErrSchemaChanged)
	assert.Contains(t, err.Error(), `"t"`)
	_, err = eino.Tools(context.Background(), staticResolver{tl})
	require.ErrorIs(t, err, eino.ErrSchemaChanged)
}
