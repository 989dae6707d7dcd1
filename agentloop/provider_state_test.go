package agentloop_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestRunKeepsProviderState: the provider state of each answer, and of each
// call, is on the assistant message the loop appends, so that the next
// request can send it back.
func TestRunKeepsProviderState(t *testing.T) {
	turnState := llmtoolkit.ProviderState{"example": json.RawMessage(`{"reasoning":"r1"}`)}
	callState := llmtoolkit.ProviderState{"example": json.RawMessage(`{"signature":"s1"}`)}
	finalState := llmtoolkit.ProviderState{"example": json.RawMessage(`{"reasoning":"r2"}`)}
	call := llmtoolkittest.Call("echo", map[string]any{"text": "hi"})
	call.Provider = callState
	first := llmtoolkittest.CallTools(call)
	first.Response.Provider = turnState
	last := llmtoolkittest.Reply("done")
	last.Response.Provider = finalState
	model := llmtoolkittest.NewScriptedModel(t, first, last)
	resolver := llmtoolkittest.NewFake(map[string]string{"echo": "hi"})

	resp, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{Resolver: resolver})
	require.NoError(t, err)
	assert.Equal(t, finalState, resp.Provider)
	require.Len(t, history, 4)
	assert.Equal(t, turnState, history[1].Provider)
	assert.Equal(t, callState, history[1].ToolCalls[0].Provider)
	assert.Equal(t, finalState, history[3].Provider)

	// The second request carried the first answer's state.
	sent := model.Requests()[1].Messages[1]
	assert.Equal(t, turnState, sent.Provider)
	assert.Equal(t, callState, sent.ToolCalls[0].Provider)

	// The state survives storing the conversation as JSON.
	data, err := json.Marshal(history)
	require.NoError(t, err)
	var back []agentloop.Message
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, history[1].Provider, back[1].Provider)
	assert.Equal(t, history[1].ToolCalls[0].Provider, back[1].ToolCalls[0].Provider)
}

// TestMalformedCallIsTraced: a call whose arguments were not JSON is
// answered with an error result, and the audit trail has its row.
func TestMalformedCallIsTraced(t *testing.T) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	tools := llmtoolkittest.NewFake(nil)
	tools.Add(llmtoolkit.MustTool("echo", "Echoes.", map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"},
	}), func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Arguments["text"].(string), nil })
	const tenant, conv = "0190b3a0-0000-7000-8000-000000000001", "0190b3a0-0000-7000-8000-000000000002"
	rec := trace.Record(tools, db, trace.WithDefaultConversation(tenant, conv))

	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkit.ParseCallLenient("", "echo", `{"text": "hi"`)),
		llmtoolkittest.Reply("sorry"))
	var results []llmtoolkit.Result
	_, _, err = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send,
		agentloop.Options{Resolver: rec, OnIteration: func(it agentloop.Iteration) { results = append(results, it.Results...) }})
	require.NoError(t, err)
	require.Len(t, results, 1)
	assert.True(t, results[0].IsError)
	assert.ErrorIs(t, results[0].Err, llmtoolkit.ErrInvalidCall)
	assert.Empty(t, tools.Calls(), "the tool never ran")

	rows, err := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	assert.Equal(t, "echo", rows[0].ToolName)
	assert.Equal(t, trace.ResultError, rows[0].ResultType)
	assert.Contains(t, string(mustJSONBytes(t, rows[0].Result)), "not valid JSON")
}

func mustJSONBytes(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// TestInventedToolIsTracedAndCounted: a call to a tool the model made up
// goes back to the model as an error result naming the real tools, the
// audit trail has its row, and the same invented call again and again
// trips the circuit breaker like any repeated failure.
func TestInventedToolIsTracedAndCounted(t *testing.T) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	tools := llmtoolkittest.NewFake(map[string]string{"get_weather": "18°C"})
	const tenant, conv = "0190b3a0-0000-7000-8000-000000000003", "0190b3a0-0000-7000-8000-000000000004"
	rec := trace.Record(tools, db, trace.WithDefaultConversation(tenant, conv))

	invented := llmtoolkit.Call{Name: "get_forecast", Arguments: map[string]any{"location": "Paris"}}
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(invented), llmtoolkittest.CallTools(invented), llmtoolkittest.CallTools(invented),
		llmtoolkittest.Reply("never"))
	var results []llmtoolkit.Result
	_, _, err = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send,
		agentloop.Options{Resolver: rec, BreakerThreshold: 3, OnIteration: func(it agentloop.Iteration) { results = append(results, it.Results...) }})
	var cbe *agentloop.CircuitBreakerError
	require.ErrorAs(t, err, &cbe, "three identical invented calls trip the breaker")
	assert.Equal(t, "get_forecast", cbe.Tool)
	require.Len(t, results, 3)
	for _, r := range results {
		assert.True(t, r.IsError)
		assert.ErrorIs(t, r.Err, llmtoolkit.ErrUnknownTool)
		assert.Contains(t, r.Content, "get_weather", "the model is told which tools exist")
	}

	rows, err := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
	require.NoError(t, err)
	require.Len(t, rows, 3, "each invented call has its row")
	for _, row := range rows {
		assert.Equal(t, "get_forecast", row.ToolName)
		assert.Equal(t, trace.ResultError, row.ResultType)
	}
}
