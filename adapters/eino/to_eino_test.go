package eino_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

type echoArgs struct {
	Text string `json:"text" jsonschema:"What to echo."`
}

// seen records what the tools saw of their context.
type seen struct {
	mu       sync.Mutex
	ids      []string
	sessions []any
	iters    []int
}

func (s *seen) add(ctx context.Context) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sessions = append(s.sessions, llmtoolkit.ScopeFrom(ctx).Session["conversation"])
	n := llmtoolkit.ScopeFrom(ctx).Iteration
	s.iters = append(s.iters, n)
}

func domain(t *testing.T, s *seen) llmtoolkit.Resolver {
	t.Helper()
	r, err := agentresolver.New(
		agentresolver.Func("echo", "Echo the text.", func(ctx context.Context, a echoArgs) (string, error) {
			s.add(ctx)
			llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "echo", Payload: a.Text})
			return "echo: " + a.Text, nil
		}),
		agentresolver.Func("fail", "Always fails.", func(ctx context.Context, a echoArgs) (string, error) {
			return "", errors.New("disk on fire")
		}),
		agentresolver.Func("boom", "Panics.", func(ctx context.Context, a echoArgs) (string, error) {
			panic("kaboom")
		}),
		agentresolver.Func("stop", "Halts.", func(ctx context.Context, a echoArgs) (string, error) {
			return "", llmtoolkit.Halt("the user said stop")
		}),
	)
	require.NoError(t, err)
	return r
}

func call(id, name, args string) schema.ToolCall {
	return schema.ToolCall{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}
}

// contents maps each tool message's call id to its content.
func contents(msgs []*schema.Message) map[string]string {
	out := map[string]string{}
	for _, m := range msgs {
		out[m.ToolCallID] = m.Content
	}
	return out
}

func TestToolsNodeErrorsAreResultsNotAborts(t *testing.T) {
	ctx := context.Background()
	r := domain(t, &seen{})
	tools, err := eino.Tools(ctx, r)
	require.NoError(t, err)
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: eino.UnknownTools(r)})
	require.NoError(t, err)

	out, err := node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{
		call("c1", "echo", `{"text":"hi"}`),
		call("c2", "fail", `{"text":"x"}`),
		call("c3", "boom", `{"text":"x"}`),
		call("c4", "echo", `{"text":5}`),
		call("c5", "echo", `{not json`),
		call("c6", "nosuch", `{}`),
	}))
	require.NoError(t, err, "no tool failure may abort eino's run")
	got := contents(out)
	assert.Equal(t, "echo: hi", got["c1"])
	tests := map[string]string{"c2": "disk on fire", "c3": "kaboom", "c4": "text", "c5": "JSON", "c6": "nosuch"}
	for id, want := range tests {
		assert.Contains(t, got[id], want, id)
		assert.NotEqual(t, "", got[id], id)
	}
}

func TestHaltEndsTheRunUnlessAsked(t *testing.T) {
	ctx := context.Background()
	r := domain(t, &seen{})
	msg := schema.AssistantMessage("", []schema.ToolCall{call("c1", "stop", `{"text":"x"}`)})

	tools, err := eino.Tools(ctx, r)
	require.NoError(t, err)
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
	require.NoError(t, err)
	_, err = node.Invoke(ctx, msg)
	require.ErrorIs(t, err, llmtoolkit.ErrHalt)

	tools, err = eino.Tools(ctx, r, eino.WithHaltAsResult())
	require.NoError(t, err)
	node, err = compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
	require.NoError(t, err)
	out, err := node.Invoke(ctx, msg)
	require.NoError(t, err)
	assert.Contains(t, contents(out)["c1"], "the user said stop")
}

func TestCallIDSessionIterationAndDisplay(t *testing.T) {
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"conversation": "conv-1"} })
	s := &seen{}
	r := domain(t, s)

	var mu sync.Mutex
	hostDisplays := map[string]llmtoolkit.Display{}
	runDisplays := map[string]llmtoolkit.Display{}
	tools, err := eino.Tools(ctx, r,
		eino.WithDisplay(func(_ context.Context, id string, d llmtoolkit.Display) {
			mu.Lock()
			defer mu.Unlock()
			hostDisplays[id] = d
		}),
		eino.WithCallContext(func(ctx context.Context, id string) context.Context {
			s.mu.Lock()
			s.ids = append(s.ids, id)
			s.mu.Unlock()
			return llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(7) })
		}))
	require.NoError(t, err)
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
	require.NoError(t, err)
	_, err = node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{call("call-42", "echo", `{"text":"hi"}`)}),
		compose.WithToolOption(eino.WithDisplayTo(func(id string, d llmtoolkit.Display) {
			mu.Lock()
			defer mu.Unlock()
			runDisplays[id] = d
		})))
	require.NoError(t, err)

	assert.Equal(t, []string{"call-42"}, s.ids, "eino's tool call id")
	assert.Equal(t, []any{"conv-1"}, s.sessions)
	assert.Equal(t, []int{7}, s.iters)
	want := llmtoolkit.Display{Kind: "echo", Payload: "hi"}
	assert.Equal(t, map[string]llmtoolkit.Display{"call-42": want}, hostDisplays)
	assert.Equal(t, map[string]llmtoolkit.Display{"call-42": want}, runDisplays)
}

// TestCallIDReachesTheResolver: the id llmtoolkit's wrappers (trace) see is
// eino's tool call id.
func TestCallIDReachesTheResolver(t *testing.T) {
	ctx := context.Background()
	var got []llmtoolkit.Call
	var mu sync.Mutex
	tl := llmtoolkit.MustTool("t", "a tool", map[string]any{"type": "object", "properties": map[string]any{}})
	r := recordingResolver{tools: []llmtoolkit.Tool{tl}, fn: func(c llmtoolkit.Call) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, c)
	}}
	tools, err := eino.Tools(ctx, r)
	require.NoError(t, err)
	node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
	require.NoError(t, err)
	_, err = node.Invoke(ctx, schema.AssistantMessage("", []schema.ToolCall{call("id-1", "t", ``)}))
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "id-1", got[0].ID)
	assert.Equal(t, "t", got[0].Name)
	assert.Empty(t, got[0].Arguments)
}

func TestToolsRefusesNilResolver(t *testing.T) {
	_, err := eino.Tools(context.Background(), nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "nil")
}
