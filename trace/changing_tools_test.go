package trace_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// growing lists whichever tools it was last given, as an MCP client does
// after Refresh or a permission guard after a mode switch.
type growing struct {
	mu    sync.Mutex
	tools []llmtoolkit.Tool
}

func (g *growing) set(tools ...llmtoolkit.Tool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.tools = tools
}

func (g *growing) Tools() []llmtoolkit.Tool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.tools
}

func (g *growing) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	return "ok " + call.Name, nil
}

// TestRecorderFollowsChangingTools: a Recorder lists what the wrapped
// resolver lists now, and a tool added after Record keeps every guarantee
// (its refused call leaves a row, its secret is redacted).
func TestRecorderFollowsChangingTools(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		inner := &growing{}
		inner.set(llmtoolkit.MustTool("ping", "Pings.", nil))
		rec := trace.Record(inner, db)
		defer func() { require.NoError(t, rec.Close()) }()
		require.Len(t, rec.Tools(), 1)

		login := llmtoolkit.MustTool("login", "Logs in.", map[string]any{
			"type":       "object",
			"properties": map[string]any{"pin": map[string]any{"type": "integer", "maximum": 9999}},
			"required":   []any{"pin"},
		})
		login.SensitiveFields = []string{"pin"}
		inner.set(llmtoolkit.MustTool("ping", "Pings.", nil), login)
		require.Len(t, rec.Tools(), 2, "the tool added after Record is listed")

		res := llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{ID: "c1", Name: "login", Arguments: map[string]any{"pin": 918273}})
		require.True(t, res.IsError, "refused by validation")
		rows, err := trace.List(t.Context(), db, trace.Filter{ToolName: "login"})
		require.NoError(t, err)
		require.Len(t, rows, 1, "the refused call of a tool added after Record leaves its row")
		assert.Equal(t, "[REDACTED]", rows[0].Arguments["pin"])
		result, err := json.Marshal(rows[0].Result)
		require.NoError(t, err)
		assert.Equal(t, "error", rows[0].ResultType)
		assert.False(t, strings.Contains(string(result), "918273"), "the secret is scrubbed from the error: %s", result)
	})
}
