package otelkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// TestRecipeStepSpansOnBothPaths: a call_tool call given to an
// instrumented toolsearch proxy's Resolve (not through Execute) had a span
// for call_tool only; its step ran below the wrapper, unseen. The step now
// has its span, under the recipe's, on both paths.
func TestRecipeStepSpansOnBothPaths(t *testing.T) {
	for _, path := range []string{"Execute", "Resolve"} {
		t.Run(path, func(t *testing.T) {
			tel := newTelemetry(t)
			fake := lt.NewFake(map[string]string{"danger_deploy": "deployed"})
			r := otelkit.Instrument(toolsearch.New(fake, toolsearch.WithProxy(), toolsearch.WithUndiscoveredCalls()), tel.opts()...)
			call := llmtoolkit.Call{ID: "c1", Name: toolsearch.CallToolName, Arguments: map[string]any{"name": "danger_deploy", "arguments": map[string]any{}}}
			if path == "Execute" {
				res := llmtoolkit.Execute(context.Background(), r, call)
				require.False(t, res.IsError, res.Content)
			} else {
				out, err := r.Resolve(context.Background(), call)
				require.NoError(t, err)
				assert.Equal(t, "deployed", out)
			}
			parent := tel.span(t, "execute_tool "+toolsearch.CallToolName)
			step := tel.span(t, "execute_tool danger_deploy")
			assert.Equal(t, parent.SpanContext.SpanID(), step.Parent.SpanID(), "the step nests under the recipe")
		})
	}
}
