package eino_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

// switching offers only "look" until planned is set, then "look" and "act"
// (the plan mode's switch, in small).
type switching struct{ planned atomic.Bool }

var (
	lookTool = llmtoolkit.MustTool("look", "Look.", map[string]any{"type": "object", "properties": map[string]any{}})
	actTool  = llmtoolkit.MustTool("act", "Act.", map[string]any{"type": "object", "properties": map[string]any{}})
)

func (s *switching) Tools() []llmtoolkit.Tool {
	if s.planned.Load() {
		return []llmtoolkit.Tool{lookTool, actTool}
	}
	return []llmtoolkit.Tool{lookTool}
}

func (s *switching) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	for _, t := range s.Tools() {
		if t.Name == call.Name {
			return "did " + call.Name, nil
		}
	}
	return "", llmtoolkit.ErrUnknownTool
}

// listingModel calls "act" once, records the tool names it was offered for
// each turn and the last tool result.
type listingModel struct {
	bound   []string
	offered [][]string
	last    string
}

func (m *listingModel) Generate(_ context.Context, input []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	names := m.bound
	if o := model.GetCommonOptions(nil, opts...); o.Tools != nil {
		names = nil
		for _, ti := range o.Tools {
			names = append(names, ti.Name)
		}
	}
	m.offered = append(m.offered, names)
	if last := input[len(input)-1]; last.Role == schema.Tool {
		m.last = last.Content
		return schema.AssistantMessage("done", nil), nil
	}
	return schema.AssistantMessage("", []schema.ToolCall{call("a1", "act", `{}`)}), nil
}

func (m *listingModel) Stream(context.Context, []*schema.Message, ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	panic("not used")
}

func (m *listingModel) WithTools(infos []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	for _, ti := range infos {
		m.bound = append(m.bound, ti.Name)
	}
	return m, nil
}

// TestChangedToolListReachesTheNextRun: eino binds the tools when the agent
// is built; a list that changed is handed to a run with react.WithTools.
func TestChangedToolListReachesTheNextRun(t *testing.T) {
	ctx := context.Background()
	r := &switching{}
	tools, err := eino.Tools(ctx, r)
	require.NoError(t, err)
	m := &listingModel{}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{ToolCallingModel: m,
		ToolsConfig: compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: eino.UnknownTools(r)}})
	require.NoError(t, err)
	in := []*schema.Message{schema.UserMessage("act")}

	_, err = agent.Generate(ctx, in)
	require.NoError(t, err, "a call of a tool not offered is a result, not an abort")
	assert.Equal(t, []string{"look"}, m.offered[0])
	assert.Contains(t, m.last, "act", "the unknown-tool result names the tool")
	assert.NotEqual(t, "did act", m.last)

	r.planned.Store(true)
	tools, err = eino.Tools(ctx, r)
	require.NoError(t, err)
	opts, err := react.WithTools(ctx, tools...)
	require.NoError(t, err)
	m.offered = nil
	_, err = agent.Generate(ctx, in, opts...)
	require.NoError(t, err)
	assert.Equal(t, []string{"look", "act"}, m.offered[0])
	assert.Equal(t, "did act", m.last)
}
