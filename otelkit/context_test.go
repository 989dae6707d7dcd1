package otelkit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// TestContextChangesAreSpanEvents: each clearing and compaction of the
// run's history is an event on the run's span, with the tokens before and
// after.
func TestContextChangesAreSpanEvents(t *testing.T) {
	tel := newTelemetry(t)
	fake := (&lt.Fake{}).Handle("read", func(context.Context, llmtoolkit.Call) (string, error) { return strings.Repeat("x", 3000), nil })
	var turns []lt.Turn
	for k := range 12 {
		turns = append(turns, lt.CallTools(llmtoolkit.Call{ID: fmt.Sprint("c", k), Name: "read"}))
	}
	turns = append(turns, lt.Reply("done"))
	model := lt.NewScriptedModel(t, turns...)
	sum := func(context.Context, []agentloop.Message) (string, error) { return "summary", nil }
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Resolver: fake, Logger: quiet, MaxIterations: 20, Tracer: otelkit.Agent("coder", tel.opts()...),
		ContextBudget: 4000, ContextPolicy: agentloop.ContextPolicy{Summarize: sum, KeepToolResults: 1, ClearAt: 1200, CompactAt: 1300},
	})
	require.NoError(t, err)
	run := tel.span(t, "invoke_agent coder")
	kinds := map[string]int{}
	for _, e := range run.Events {
		if !strings.HasPrefix(e.Name, "llmtoolkit.context.") {
			continue
		}
		kinds[e.Name]++
		attrs := map[string]int64{}
		for _, a := range e.Attributes {
			attrs[string(a.Key)] = a.Value.AsInt64()
		}
		assert.Greater(t, attrs["llmtoolkit.context.tokens_before"], attrs["llmtoolkit.context.tokens_after"], e.Name)
		assert.Positive(t, attrs["llmtoolkit.context.iteration"])
	}
	assert.Positive(t, kinds["llmtoolkit.context.context_cleared"], "%v", kinds)
	assert.Positive(t, kinds["llmtoolkit.context.context_compacted"], "%v", kinds)
}
