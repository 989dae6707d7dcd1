package agent_test

import (
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
)

// An image read_file attaches crosses the guard, Compose, Filter and a
// session into the agent loop's tool message.
func TestPartsCrossTheGuard(t *testing.T) {
	dir := t.TempDir()
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89\x00\x00\x00\x00IEND\xaeB`\x82")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dot.png"), png, 0o644))
	ct, err := codetools.New(dir)
	require.NoError(t, err)
	defer ct.Close()
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
	_, sess := llmtoolkit.PrepareSession(p.Guard(llmtoolkit.Filter(llmtoolkit.Compose(ct), func(llmtoolkit.Tool) bool { return true })),
		[]string{"read_file"}, map[string]any{"user": "u"})
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("read_file", map[string]any{"path": "dot.png"})),
		llmtoolkittest.Reply("a dot"))
	_, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("look")}, model.Send, agentloop.Options{Resolver: sess})
	require.NoError(t, err)
	require.Len(t, history, 4)
	assert.Contains(t, history[2].Content, "1x1 pixels")
	require.Len(t, history[2].Parts, 1, history[2].Content)
	assert.Equal(t, png, history[2].Parts[0].Data)
}
