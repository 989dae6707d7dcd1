package readme

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestQuickStartDoesWhatTheREADMESays runs the README's quick start as a
// user would paste it, with a scripted model, and checks what the text
// around it promises: every call traced with the model's call id, the
// sensitive field redacted in the row and its value in no row.
func TestQuickStartDoesWhatTheREADMESays(t *testing.T) {
	t.Chdir(t.TempDir())
	require.NoError(t, os.MkdirAll(filepath.Join("path", "to", "project"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join("path", "to", "project", "main.go"), []byte("package main\n"), 0o644))

	const secret = "sk-quickstart-secret"
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(
			llmtoolkittest.Call("weather", map[string]any{"city": "Lisbon", "api_key": secret}),
			llmtoolkittest.Call("read_file", map[string]any{"path": "main.go"}),
		),
		llmtoolkittest.Reply("Sunny in Lisbon."),
	)
	require.NoError(t, QuickStart(t.Context(), model.Send))

	db, err := trace.OpenSQLite("traces.db")
	require.NoError(t, err)
	rows, err := trace.List(t.Context(), db, trace.Filter{})
	require.NoError(t, err)
	require.Len(t, rows, 2, "every call traced")
	byTool := map[string]trace.Trace{}
	for _, r := range rows {
		byTool[r.ToolName] = r
		require.NotNil(t, r.CallID, "the row names the model's call")
		assert.NotContains(t, string(mustJSON(t, r)), secret, "no secret stored")
	}
	assert.Equal(t, "call_1_1", *byTool["weather"].CallID)
	assert.Equal(t, trace.Redacted, byTool["weather"].Arguments["api_key"])
	assert.Equal(t, rows[0].ConversationID, rows[1].ConversationID, "one conversation")
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
