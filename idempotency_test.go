package llmtoolkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit"
)

func TestIdempotencyKey(t *testing.T) {
	base := llmtoolkit.WithScope(llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.RunID = "run-1" }), func(sc *llmtoolkit.Scope) { sc.StartTurn(2) })
	call := llmtoolkit.Call{ID: "llmtoolkit-call-1", Name: "send"}
	tests := []struct {
		name string
		ctx  context.Context
		call llmtoolkit.Call
		want string
	}{
		{"run, iteration, call", base, call, "run-1//2/llmtoolkit-call-1"},
		{"another turn", llmtoolkit.WithScope(base, func(sc *llmtoolkit.Scope) { sc.StartTurn(3) }), call, "run-1//3/llmtoolkit-call-1"},
		{"another run", llmtoolkit.WithScope(base, func(sc *llmtoolkit.Scope) { sc.RunID = "run-2" }), call, "run-2//2/llmtoolkit-call-1"},
		{"a sub-agent", llmtoolkit.WithScope(base, func(sc *llmtoolkit.Scope) { sc.AgentID = "agent-7" }), call, "run-1/agent-7/2/llmtoolkit-call-1"},
		{"no run", llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.StartTurn(1) }), call, "//1/llmtoolkit-call-1"},
		{"separators escaped", llmtoolkit.WithScope(base, func(sc *llmtoolkit.Scope) { sc.RunID = "a/b" }), llmtoolkit.Call{ID: "c/d"}, "a%2Fb//2/c%2Fd"},
	}
	keys := map[string]string{}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := llmtoolkit.IdempotencyKey(tc.ctx, tc.call)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, got, llmtoolkit.IdempotencyKey(tc.ctx, tc.call), "the same call gives the same key")
			if other, dup := keys[got]; dup {
				t.Errorf("%q and %q give the same key %q", other, tc.name, got)
			}
			keys[got] = tc.name
		})
	}
	assert.Empty(t, llmtoolkit.ScopeFrom(context.Background()).RunID)
}
