package agentloop_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestRunCallbackPanics: a panic in OnEvent (called from the goroutines of
// parallel calls), OnIteration or Stop ends the run with a
// *CallbackPanicError naming the callback, its history paired; the host
// lives on.
func TestRunCallbackPanics(t *testing.T) {
	fake := (&lt.Fake{}).Add(llmtoolkit.MustTool("look", "Looks.", nil), func(context.Context, llmtoolkit.Call) (string, error) { return "seen", nil })
	for _, tc := range []struct {
		name     string
		opts     agentloop.Options
		turns    []lt.Turn
		callback string
	}{
		{"OnEvent, from parallel calls", agentloop.Options{OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventToolCall {
				panic("host bug")
			}
		}}, []lt.Turn{lt.CallTools(lt.Call("look", nil), lt.Call("look", nil)), lt.Reply("done")}, "OnEvent"},
		{"OnIteration", agentloop.Options{OnIteration: func(agentloop.Iteration) { panic("host bug") }},
			[]lt.Turn{lt.CallTools(lt.Call("look", nil)), lt.Reply("done")}, "OnIteration"},
		{"Stop", agentloop.Options{Stop: func(context.Context, agentloop.Response) (string, bool) { panic("host bug") }},
			[]lt.Turn{lt.Reply("done")}, "Stop"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := tc.opts
			opts.Resolver, opts.Logger = fake, quiet
			model := lt.NewScriptedModel(t, tc.turns...)
			_, history, err := agentloop.Run(t.Context(), prompt(), model.Send, opts)
			require.Error(t, err)
			var pe *agentloop.CallbackPanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, tc.callback, pe.Callback)
			assert.ErrorIs(t, err, agentloop.ErrCallbackPanic)
			assert.Contains(t, err.Error(), "Options."+tc.callback+" panicked: host bug")
			calls, results := 0, 0
			for _, m := range history {
				calls += len(m.ToolCalls)
				if m.Role == agentloop.RoleTool {
					results++
				}
			}
			assert.Equal(t, calls, results, "every call keeps its result")
		})
	}
}
