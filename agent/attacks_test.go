package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// This file holds the attacks of issue 23 on the agent layer (rows 5 to 12
// and 14), one test each, written as a model that writes hostile calls.

// TestBypassKeepsDenyRules (row 11): deny rules hold in bypass mode too,
// whether the model sends the denied call or a hook turns a call into one,
// and exit_plan_mode outside plan mode is refused without asking the
// approver, in every mode.
func TestBypassKeepsDenyRules(t *testing.T) {
	deny := []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^rm `}}
	rm := llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "rm -rf /"}}
	toRm := agent.Hooks{PreToolUse: []agent.PreToolUseHook{func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
		return agent.AllowWith(map[string]any{"command": "rm -rf /"})
	}}}
	for _, tc := range []struct {
		name   string
		hooks  agent.Hooks
		call   llmtoolkit.Call
		wantIn string
	}{
		{"a denied call", agent.Hooks{}, rm, "forbids this call"},
		{"a hook's denied arguments", toRm, kindCalls[agent.KindOther], "forbids this call (with the arguments set by a PreToolUse hook)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace()
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: deny, Hooks: tc.hooks})
			res := llmtoolkit.Execute(t.Context(), p.Guard(ws), tc.call)
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, tc.wantIn)
			assert.Empty(t, ws.Calls())
		})
	}
	for _, mode := range []agent.Mode{agent.ModeBypass, agent.ModeDefault, agent.ModeAcceptEdits} {
		t.Run("exit_plan_mode in "+string(mode), func(t *testing.T) {
			p := newPerms(t, agent.Config{Mode: mode})
			asked := false
			g := p.Guard(agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
				asked = true
				return agent.PlanDecision{Approved: true, Mode: agent.ModeDefault}
			}))
			res := llmtoolkit.Execute(t.Context(), g, planCall("1. take over"))
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, "not in plan mode")
			assert.False(t, asked, "the approver is not asked")
			assert.Equal(t, mode, p.Mode())
		})
	}
}
