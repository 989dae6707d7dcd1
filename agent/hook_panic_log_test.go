package agent_test

import (
	"bytes"
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// TestHookPanicLogCarriesNoArgument: a hook that panics with a value quoting
// the call's arguments (a secret among them) fails the call; the log names
// the panic's type and stack, never its value.
func TestHookPanicLogCarriesNoArgument(t *testing.T) {
	const secret = "sk-hook-secret-123"
	var logs bytes.Buffer
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Hooks: agent.Hooks{PostToolUse: []agent.PostToolUseHook{func(_ context.Context, call llmtoolkit.Call, _ string) string {
			panic("hook saw " + call.Arguments["command"].(string))
		}}}})
	res := llmtoolkit.Execute(t.Context(), p.Guard(workspace()), llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "curl -H " + secret}})
	require.True(t, res.IsError, res.Content)
	assert.Contains(t, logs.String(), "panic_type=string")
	assert.NotContains(t, logs.String(), secret)
}
