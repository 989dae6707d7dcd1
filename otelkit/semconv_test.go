package otelkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// TestNamesFollowSemConv checks every attribute key and well-known value
// the package emits against OpenTelemetry's own generated package for the
// version it states.
func TestNamesFollowSemConv(t *testing.T) {
	assert.Equal(t, "https://opentelemetry.io/schemas/"+otelkit.SemConvVersion, semconv.SchemaURL)
	known := map[string]bool{}
	for _, k := range []string{
		string(semconv.GenAIOperationNameKey), string(semconv.GenAIToolNameKey), string(semconv.GenAIToolCallIDKey),
		string(semconv.GenAIToolDescriptionKey), string(semconv.GenAIToolTypeKey), string(semconv.GenAIToolCallArgumentsKey),
		string(semconv.GenAIToolCallResultKey), string(semconv.GenAIAgentNameKey), string(semconv.GenAIProviderNameKey),
		string(semconv.GenAIRequestModelKey), string(semconv.GenAIUsageInputTokensKey), string(semconv.GenAIUsageOutputTokensKey),
		string(semconv.GenAIResponseFinishReasonsKey), string(semconv.ErrorTypeKey),
	} {
		known[k] = true
	}

	// Emit every attribute: a tool call with content, and an agent run.
	tel := newTelemetry(t)
	tools := otelkit.Instrument(lt.NewFake(map[string]string{"t": "ok"}), tel.opts(otelkit.WithCaptureContent())...)
	model := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "1", Name: "t"}, {ID: "2", Name: "missing"}}, Usage: agentloop.Usage{InputTokens: 1, OutputTokens: 1}, StopReason: "tool_calls"}},
		lt.Reply("done"))
	_, _, err := agentloop.Run(context.Background(), prompt(), model.Send, agentloop.Options{
		Resolver: tools,
		Tracer:   otelkit.Agent("a", tel.opts(otelkit.WithProviderName("openai"), otelkit.WithModel("m"))...),
		Logger:   quiet,
	})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, s := range tel.spans() {
		for k := range attrs(s) {
			seen[k] = true
			assert.True(t, known[k], "span %s: attribute %s is not a v%s key", s.Name, k, otelkit.SemConvVersion)
		}
	}
	for _, p := range tel.toolPoints(t) {
		for k := range p.attrs {
			assert.True(t, known[k], "metric attribute %s is not a v%s key", k, otelkit.SemConvVersion)
		}
	}
	assert.Len(t, seen, len(known), "every key is emitted by this scenario")

	ops := map[string]bool{}
	for _, s := range tel.spans() {
		ops[attrs(s)["gen_ai.operation.name"].(string)] = true
	}
	assert.Equal(t, map[string]bool{
		semconv.GenAIOperationNameExecuteTool.Value.AsString(): true,
		semconv.GenAIOperationNameInvokeAgent.Value.AsString(): true,
		semconv.GenAIOperationNameChat.Value.AsString():        true,
	}, ops)
}
