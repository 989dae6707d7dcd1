package llmtoolkit

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeniedCallIsAnErrorResultThatSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		name, reason, want string
	}{
		{name: "with a reason", reason: "plan mode allows only read-only tools", want: `permission denied: tool "rm" was not run: plan mode allows only read-only tools`},
		{name: "without a reason", want: `permission denied: tool "rm" was not run`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ResolverFunc(func(_ context.Context, call Call) (string, error) {
				return "", Deny(call.Name, tc.reason)
			})
			res := Execute(t.Context(), r, Call{ID: "c1", Name: "rm"})
			require.True(t, res.IsError)
			assert.Equal(t, tc.want, res.Content)
			assert.ErrorIs(t, res.Err, ErrDenied)
			var de *DeniedError
			require.True(t, errors.As(res.Err, &de))
			assert.Equal(t, "rm", de.Tool)
			assert.Equal(t, tc.reason, de.Reason)
		})
	}
}

func TestAgentIDTravelsOnTheContext(t *testing.T) {
	ctx := t.Context()
	assert.Empty(t, ScopeFrom(ctx).AgentID)
	sub := WithScope(WithScope(ctx, func(sc *Scope) { sc.Session = map[string]any{"k": "v"} }), func(sc *Scope) { sc.AgentID = "sub-1" })
	assert.Equal(t, "sub-1", ScopeFrom(sub).AgentID)
	assert.Equal(t, "v", ScopeFrom(sub).Session["k"], "the parent's session goes on")
}
