package llmtoolkittest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// recorder is a TB that records failures instead of failing the test.
type recorder struct {
	mu     sync.Mutex
	errors []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func TestScriptedModelAnswersInOrder(t *testing.T) {
	boom := errors.New("boom")
	tool := llmtoolkit.MustTool("t", "A tool.", nil)
	m := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("t", nil), llmtoolkit.Call{ID: "mine", Name: "t"}),
		llmtoolkittest.Reply("text"),
		llmtoolkittest.Fail(boom),
		llmtoolkittest.Respond(func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			return agentloop.Response{Content: fmt.Sprintf("%d messages", len(msgs))}, nil
		}),
	)
	msgs := []agentloop.Message{agentloop.UserMessage("hi")}
	ctx := t.Context()

	r, err := m.Send(ctx, msgs, []llmtoolkit.Tool{tool})
	require.NoError(t, err)
	require.Len(t, r.ToolCalls, 2)
	assert.Equal(t, "call_1_1", r.ToolCalls[0].ID)
	assert.Equal(t, map[string]any{}, r.ToolCalls[0].Arguments)
	assert.Equal(t, "mine", r.ToolCalls[1].ID)

	r, err = m.Send(ctx, msgs, nil)
	require.NoError(t, err)
	assert.Equal(t, "text", r.Content)
	assert.Empty(t, r.ToolCalls)

	_, err = m.Send(ctx, msgs, nil)
	require.ErrorIs(t, err, boom)

	r, err = m.Send(ctx, append(msgs, agentloop.UserMessage("again")), nil)
	require.NoError(t, err)
	assert.Equal(t, "2 messages", r.Content)
	assert.Equal(t, 0, m.Remaining())

	reqs := m.Requests()
	require.Len(t, reqs, 4)
	assert.Equal(t, msgs, reqs[0].Messages)
	assert.Equal(t, "t", reqs[0].Tools[0].Name)
	assert.Len(t, m.LastRequest().Messages, 2)
}

func TestScriptedModelFailsWhenScriptRunsOut(t *testing.T) {
	rec := &recorder{}
	m := llmtoolkittest.NewScriptedModel(rec, llmtoolkittest.Reply("only"))
	_, err := m.Send(t.Context(), nil, nil)
	require.NoError(t, err)
	_, err = m.Send(t.Context(), []agentloop.Message{agentloop.UserMessage("more?")}, nil)
	require.ErrorIs(t, err, llmtoolkittest.ErrScriptExhausted)
	require.Len(t, rec.errors, 1)
	assert.Contains(t, rec.errors[0], "called 2 times but the script has only 1 turns")
	assert.Contains(t, rec.errors[0], `user "more?"`)
}

func TestScriptedModelWithoutATest(t *testing.T) {
	m := llmtoolkittest.NewScriptedModel(nil, llmtoolkittest.Reply("only"))
	resp, err := m.Send(t.Context(), nil, nil)
	require.NoError(t, err)
	assert.Equal(t, "only", resp.Content)
	_, err = m.Send(t.Context(), nil, nil)
	require.ErrorIs(t, err, llmtoolkittest.ErrScriptExhausted, "no t to fail: the error alone")
}

func TestScriptedModelHonoursCancelledContext(t *testing.T) {
	m := llmtoolkittest.NewScriptedModel(t, llmtoolkittest.Reply("kept"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := m.Send(ctx, nil, nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, 1, m.Remaining())
}

func TestScriptedModelConcurrentUse(t *testing.T) {
	const n = 32
	turns := make([]llmtoolkittest.Turn, n)
	for i := range turns {
		turns[i] = llmtoolkittest.Reply(fmt.Sprint(i))
	}
	m := llmtoolkittest.NewScriptedModel(t, turns...)
	var wg sync.WaitGroup
	seen := make(chan string, n)
	for range n {
		wg.Go(func() {
			r, err := m.Send(t.Context(), []agentloop.Message{agentloop.UserMessage("x")}, nil)
			assert.NoError(t, err)
			seen <- r.Content
		})
	}
	wg.Wait()
	close(seen)
	got := map[string]bool{}
	for s := range seen {
		got[s] = true
	}
	assert.Len(t, got, n, "each turn is used exactly once")
	assert.Len(t, m.Requests(), n)
}

func TestScriptedModelDrivesTheLoop(t *testing.T) {
	fake := llmtoolkittest.NewFake(map[string]string{"now": "12:00"})
	m := llmtoolkittest.NewScriptedModel(t, llmtoolkittest.CallTools(llmtoolkittest.Call("now", nil)), llmtoolkittest.Reply("It is noon."))
	resp, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("time?")}, m.Send, agentloop.Options{Resolver: fake})
	require.NoError(t, err)
	assert.Equal(t, "It is noon.", resp.Content)
	last := m.LastRequest().Messages
	assert.Equal(t, agentloop.Message{Role: agentloop.RoleTool, Content: "12:00", ToolCallID: "call_1_1", ToolName: "now"}, last[len(last)-1])
}
