package agentloop_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

func TestRunDenialsDoNotTripTheBreaker(t *testing.T) {
	fake := (&lt.Fake{}).Add(llmtoolkit.MustTool("rm", "Removes.", nil), func(_ context.Context, call llmtoolkit.Call) (string, error) {
		return "", llmtoolkit.Deny(call.Name, "not in this folder")
	})
	var turns []lt.Turn
	for range 5 {
		turns = append(turns, lt.CallTools(lt.Call("rm", nil)))
	}
	model := lt.NewScriptedModel(t, append(turns, lt.Reply("gave up"))...)
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, BreakerThreshold: 2, Logger: quiet})
	require.NoError(t, err, "five identical denials in a row must not trip a breaker at 2")
	assert.Equal(t, "gave up", resp.Content)
	assert.Equal(t, `permission denied: tool "rm" was not run: not in this folder`, history[3].Content)
	assert.True(t, history[3].IsError)
}

func TestRunDenialKeepsTheToolsStreak(t *testing.T) {
	var n atomic.Int32
	fake := (&lt.Fake{}).Add(llmtoolkit.MustTool("flaky", "Fails.", nil), func(_ context.Context, call llmtoolkit.Call) (string, error) {
		if n.Add(1) == 2 {
			return "", llmtoolkit.Deny(call.Name, "no")
		}
		return "", assert.AnError
	})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("flaky", nil)), lt.CallTools(lt.Call("flaky", nil)), lt.CallTools(lt.Call("flaky", nil)))
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: fake, BreakerThreshold: 2, Logger: quiet})
	require.ErrorIs(t, err, agentloop.ErrCircuitBreaker, "fail, deny, fail: the denial neither counts nor resets")
}

// changing lists a tool that another call adds.
type changing struct {
	llmtoolkit.Resolver
	extra atomic.Bool
}

func (c *changing) Tools() []llmtoolkit.Tool {
	tools := c.Resolver.Tools()
	if c.extra.Load() {
		tools = append(tools, llmtoolkit.MustTool("write", "Writes.", nil))
	}
	return tools
}

func TestRunRereadsTheResolversToolsEachIteration(t *testing.T) {
	r := &changing{}
	r.Resolver = (&lt.Fake{}).Add(llmtoolkit.MustTool("unlock", "Unlocks.", nil), func(context.Context, llmtoolkit.Call) (string, error) {
		r.extra.Store(true)
		return "unlocked", nil
	})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("unlock", nil)), lt.Reply("done"))
	_, _, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Resolver: r, Logger: quiet})
	require.NoError(t, err)
	reqs := model.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []string{"unlock"}, names(reqs[0].Tools))
	assert.Equal(t, []string{"unlock", "write"}, names(reqs[1].Tools), "the new tool is offered from the next iteration")
}

func names(tools []llmtoolkit.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestRunStopCanContinueTheLoop(t *testing.T) {
	model := lt.NewScriptedModel(t, lt.Reply("first"), lt.Reply("second"), lt.Reply("third"))
	var seen []int
	stop := func(ctx context.Context, resp agentloop.Response) (string, bool) {
		n, ok := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0
		require.True(t, ok)
		seen = append(seen, n)
		if resp.Content == "third" {
			return "", false
		}
		return "keep going after " + resp.Content, true
	}
	resp, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Stop: stop, Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "third", resp.Content)
	assert.Equal(t, []int{1, 2, 3}, seen)
	assert.Equal(t, []agentloop.Role{sys, usr, asst, usr, asst, usr, asst}, roles(history))
	assert.Equal(t, "keep going after first", history[3].Content)
	assert.Equal(t, "keep going after second", history[5].Content)
}

func TestRunStopIsBoundedByMaxIterations(t *testing.T) {
	model := lt.NewScriptedModel(t, lt.Reply("a"), lt.Reply("b"))
	always := func(context.Context, agentloop.Response) (string, bool) { return "again", true }
	_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, agentloop.Options{Stop: always, MaxIterations: 2, Logger: quiet})
	require.ErrorIs(t, err, agentloop.ErrMaxIterations)
	assert.Len(t, history, 6)
}
