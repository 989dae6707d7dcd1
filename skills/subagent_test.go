package skills_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// TestSubAgentGetsASubset: a sub-agent of package agent's spawn_agent,
// given a Toolset over a Subset, sees and activates only those skills.
func TestSubAgentGetsASubset(t *testing.T) {
	sub := skills.NewTools(validSet(t).Subset("minimal"))
	var offered []string
	model := lt.NewScriptedModel(t,
		lt.CallTools(llmtoolkit.Call{ID: "a1", Name: skills.ActivateTool, Arguments: map[string]any{"name": "pdf-processing"}}),
		lt.CallTools(llmtoolkit.Call{ID: "a2", Name: skills.ActivateTool, Arguments: map[string]any{"name": "minimal"}}),
		lt.Reply("done"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{
		Model: func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
			for _, m := range msgs {
				if m.Role == agentloop.RoleTool {
					offered = append(offered, m.Content)
				}
			}
			return model.Send(ctx, msgs, tools)
		},
		Tools: sub, Instructions: "Use the skills.\n" + validSet(t).Subset("minimal").Index(0),
		MaxIterations: 4, Logger: slog.New(slog.DiscardHandler),
	})
	require.NoError(t, err)
	res := llmtoolkit.Execute(t.Context(), spawn, llmtoolkit.Call{ID: "s", Name: agent.SpawnToolName, Arguments: map[string]any{"task": "Do it."}})
	require.NoError(t, res.Err, res.Content)
	assert.Equal(t, "done", res.Content)
	require.Len(t, offered, 3) // turn 2 reads the refusal; turn 3 the refusal and the activation
	assert.Contains(t, offered[0], "unknown skill")
	assert.Contains(t, offered[0], "(available: minimal)")
	assert.True(t, strings.Contains(offered[len(offered)-1], `<skill_content name="minimal">`))
	assert.Equal(t, []string{"minimal"}, sub.Active())
}
