package otelkit_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// TestToolSpanCarriesSessionIDs: a call whose session map names a tenant
// and a conversation (as an MCP server under mcp.WithBearerAuth sets it
// from the caller's token) has them on its span.
func TestToolSpanCarriesSessionIDs(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(echoFake(), tel.opts()...)
	ctx := llmtoolkit.WithScope(testContext(t), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"tenant_id": "t-1", "conversation_id": "c-1"} })
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "call_1", Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.False(t, res.IsError, res.Content)
	a := attrs(tel.span(t, "execute_tool echo"))
	assert.Equal(t, "c-1", a["gen_ai.conversation.id"])
	assert.Equal(t, "t-1", a["llmtoolkit.tenant.id"])
}
