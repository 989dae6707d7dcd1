package agentresolver_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// TestFuncHandlerReachesItsCall: a typed handler, which is not handed its
// Call, finds it on its context and computes the same idempotency key as a
// resolver that is handed the call.
func TestFuncHandlerReachesItsCall(t *testing.T) {
	type args struct {
		To string `json:"to"`
	}
	var gotKey, gotID string
	r, err := agentresolver.New(agentresolver.Func("send", "Sends.", func(ctx context.Context, a args) (string, error) {
		call, ok := llmtoolkit.CallFrom(ctx)
		require.True(t, ok)
		gotID = call.ID
		gotKey = llmtoolkit.IdempotencyKey(ctx, call)
		return "sent to " + a.To, nil
	}))
	require.NoError(t, err)

	ctx := llmtoolkit.WithScope(llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.RunID = "run-7" }), func(sc *llmtoolkit.Scope) { sc.StartTurn(3) })
	call := llmtoolkit.Call{ID: "call_1", Name: "send", Arguments: map[string]any{"to": "ana"}}
	res := llmtoolkit.Execute(ctx, r, call)
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "call_1", gotID)
	assert.Equal(t, llmtoolkit.IdempotencyKey(ctx, call), gotKey)
	assert.Contains(t, gotKey, "run-7")

	_, ok := llmtoolkit.CallFrom(t.Context())
	assert.False(t, ok, "outside Execute there is no call")
}
