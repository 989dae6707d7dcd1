package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// TestPendingIsNeitherRunNorRefused: a callback or a PreToolUse hook that
// leaves a call pending fails it with its own error, unwrapped; the tool
// does not run, and neither the tool's observers nor the PostToolUse
// hooks hear of it (a refusal they would).
func TestPendingIsNeitherRunNorRefused(t *testing.T) {
	later := errors.New("asked, answer later")
	pending := func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Pending(later) }
	for name, cfg := range map[string]agent.Config{
		"callback":          {CanUseTool: pending},
		"PreToolUse hook":   {Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{pending}}},
		"deny for contrast": {CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Deny("no") }},
	} {
		t.Run(name, func(t *testing.T) {
			var failures, ran int
			observed := &counter{}
			tools := workspace()
			bash, _ := llmtoolkit.FindTool(tools, "bash")
			bash.Observers = []llmtoolkit.Observer{observed}
			tools.Add(bash, func(context.Context, llmtoolkit.Call) (string, error) { ran++; return "ran", nil })
			cfg.Hooks.PostToolUseFailure = []agent.PostToolUseFailureHook{func(context.Context, llmtoolkit.Call, error) { failures++ }}
			p := newPerms(t, cfg)
			res := llmtoolkit.Execute(t.Context(), p.Guard(tools), kindCalls[agent.KindOther])
			require.True(t, res.IsError)
			assert.Zero(t, ran, "the tool did not run")
			if name == "deny for contrast" {
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
				assert.Equal(t, 1, observed.n, "a refusal is observed")
				return
			}
			assert.Same(t, later, res.Err, "the pending error, as given")
			assert.Zero(t, observed.n, "not observed as a refusal")
			assert.Zero(t, failures, "no PostToolUseFailure")
		})
	}
}

// counter is an Observer that counts what it is told.
type counter struct{ n int }

func (c *counter) ObserveCall(context.Context, llmtoolkit.Observation) { c.n++ }
