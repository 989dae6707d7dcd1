package readme

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestCodingAgentTracesItsSubAgent runs the README's coding agent as
// written: the parent spawns a sub-agent given the plain code tools
// (SubAgentConfig{Tools: code}), and the README says a sub-agent's calls are
// traced in the parent's conversation with its id.
func TestCodingAgentTracesItsSubAgent(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte("package main\n"), 0o644))
	code, err := codetools.New(root)
	require.NoError(t, err)
	defer code.Close()
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))

	// One script for the parent and its sub-agent: the sub-agent runs inside
	// the parent's spawn_agent call.
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call(agent.SpawnToolName, map[string]any{"task": "read main.go", "description": "look"})),
		llmtoolkittest.CallTools(llmtoolkittest.Call("read_file", map[string]any{"path": "main.go"})), // the sub-agent
		llmtoolkittest.Reply("it is package main"), // the sub-agent's answer
		llmtoolkittest.Reply("done"),
	)
	tenant, conv := "0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f", "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718"
	ctx := trace.WithConversation(t.Context(), tenant, conv, 0)
	allow := func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Allow() }
	noHook := func(_ context.Context, _ llmtoolkit.Call, content string) string { return content }
	approve := func(context.Context, string) agent.PlanDecision { return agent.PlanDecision{Approved: true} }
	CodingAgent(ctx, code, db, []agentloop.Message{agentloop.UserMessage("what is main.go?")}, model.Send,
		allow, noHook, approve, func(context.Context, string, []agent.Todo) {})
	require.Equal(t, 0, model.Remaining(), "the whole script ran")

	rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: conv})
	require.NoError(t, err)
	byTool := map[string]trace.Trace{}
	for _, r := range rows {
		byTool[r.ToolName] = r
	}
	require.Contains(t, byTool, agent.SpawnToolName)
	require.Contains(t, byTool, "read_file", "the sub-agent's call has a row")
	require.NotNil(t, byTool["read_file"].AgentID, "with the sub-agent's id")
	assert.NotEmpty(t, *byTool["read_file"].AgentID)
	assert.Nil(t, byTool[agent.SpawnToolName].AgentID, "the parent's own call has none")
	assert.Len(t, rows, 2, "one row each")
}
