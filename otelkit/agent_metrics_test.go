package otelkit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/semconv/v1.41.0/genaiconv"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// metricPoints returns the data points of the histogram called name, with
// their attributes, and the histogram's bucket bounds.
func (tel *telemetry) metricPoints(t testing.TB, name string) ([]point, []float64) {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	var out []point
	var bounds []float64
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != name {
				continue
			}
			switch h := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, dp := range h.DataPoints {
					p := point{count: dp.Count, sum: dp.Sum, attrs: map[string]any{}}
					for _, kv := range dp.Attributes.ToSlice() {
						p.attrs[string(kv.Key)] = kv.Value.AsInterface()
					}
					out, bounds = append(out, p), dp.Bounds
				}
			case metricdata.Histogram[int64]:
				for _, dp := range h.DataPoints {
					p := point{count: dp.Count, sum: float64(dp.Sum), attrs: map[string]any{}}
					for _, kv := range dp.Attributes.ToSlice() {
						p.attrs[string(kv.Key)] = kv.Value.AsInterface()
					}
					out, bounds = append(out, p), dp.Bounds
				}
			}
		}
	}
	return out, bounds
}

// TestAgentMetrics: the agent tracer honours WithMeterProvider and records
// gen_ai.client.operation.duration for each model call and the run, and
// gen_ai.client.token.usage by token type, even with no tracer provider.
func TestAgentMetrics(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "c1", Name: "a"}}, Usage: agentloop.Usage{InputTokens: 100, OutputTokens: 20}}},
		lt.Turn{Response: agentloop.Response{Content: "done", Usage: agentloop.Usage{InputTokens: 150, OutputTokens: 5}}},
	)
	tracer := otelkit.Agent("helper", otelkit.WithMeterProvider(tel.mp), otelkit.WithProviderName("openai"), otelkit.WithModel("gpt-x"))
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Resolver: lt.NewFake(map[string]string{"a": "ok"}), Tracer: tracer, Logger: quiet})
	require.NoError(t, err)

	ops, bounds := tel.metricPoints(t, "gen_ai.client.operation.duration")
	require.Len(t, ops, 2, "%v", ops)
	byOp := map[string]point{}
	for _, p := range ops {
		byOp[p.attrs["gen_ai.operation.name"].(string)] = p
		assert.Equal(t, "openai", p.attrs["gen_ai.provider.name"])
		assert.Equal(t, "gpt-x", p.attrs["gen_ai.request.model"])
	}
	assert.Equal(t, uint64(2), byOp["chat"].count)
	assert.Equal(t, uint64(1), byOp["invoke_agent"].count)
	assert.Equal(t, 0.01, bounds[0], "the conventions' advised buckets")

	tokens, tb := tel.metricPoints(t, "gen_ai.client.token.usage")
	require.Len(t, tokens, 2)
	for _, p := range tokens {
		switch p.attrs["gen_ai.token.type"] {
		case "input":
			assert.Equal(t, 250.0, p.sum)
		case "output":
			assert.Equal(t, 25.0, p.sum)
		default:
			t.Errorf("token type %v", p.attrs["gen_ai.token.type"])
		}
	}
	assert.Equal(t, []float64{1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864}, tb)
}

// TestToolDurationBuckets: gen_ai.execute_tool.duration follows the
// conventions' advice, 10 ms to 81.92 s.
func TestToolDurationBuckets(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(lt.NewFake(map[string]string{"a": "ok"}), tel.opts()...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "a"})
	require.False(t, res.IsError)
	_, bounds := tel.metricPoints(t, "gen_ai.execute_tool.duration")
	assert.Equal(t, []float64{0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92}, bounds)
}

// TestProviderNameInferred: without WithProviderName, the provider is
// named from the provider state of an answer.
func TestProviderNameInferred(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t, lt.Turn{Response: agentloop.Response{Content: "done",
		Provider: llmtoolkit.ProviderState{"anthropic": json.RawMessage(`[]`)}}})
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Tracer: otelkit.Agent("helper", tel.opts()...), Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, "anthropic", attrs(tel.span(t, "chat"))["gen_ai.provider.name"])
	assert.Equal(t, "anthropic", attrs(tel.span(t, "invoke_agent helper"))["gen_ai.provider.name"])
}

// TestSubAgentCallsNotTaggedWithTheParent: a call made under another agent
// id than its run's is not tagged with the run's agent name.
func TestSubAgentCallsNotTaggedWithTheParent(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(lt.NewFake(map[string]string{"a": "ok"}), tel.opts()...)
	ctx, end := otelkit.Agent("parent", tel.opts()...).StartRun(testContext(t))
	llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "a"})
	llmtoolkit.Execute(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-1" }), r, llmtoolkit.Call{Name: "a"})
	end(agentloop.RunEnd{})
	points := tel.toolPoints(t)
	require.Len(t, points, 2)
	tagged := 0
	for _, p := range points {
		if p.attrs["gen_ai.agent.name"] == "parent" {
			tagged++
			assert.Equal(t, uint64(1), p.count)
		}
	}
	assert.Equal(t, 1, tagged)
}

// TestMetricNamesFollowSemConv: the agent's metrics and their token type
// attribute are named as OpenTelemetry's generated package names them.
func TestMetricNamesFollowSemConv(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t, lt.Turn{Response: agentloop.Response{Content: "done", Usage: agentloop.Usage{InputTokens: 1, OutputTokens: 1}}})
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Tracer: otelkit.Agent("a", otelkit.WithMeterProvider(tel.mp)), Logger: quiet})
	require.NoError(t, err)
	ops, _ := tel.metricPoints(t, genaiconv.ClientOperationDuration{}.Name())
	assert.NotEmpty(t, ops)
	tokens, _ := tel.metricPoints(t, genaiconv.ClientTokenUsage{}.Name())
	require.NotEmpty(t, tokens)
	assert.Contains(t, tokens[0].attrs, string(semconv.GenAITokenTypeKey))
}

// TestSubAgentRunNestsUnderItsTool: with a tracer of its own, a
// sub-agent's run is an invoke_agent span under the spawn_agent call's
// span, with its chat span under it, and its tool calls are tagged with
// its name.
func TestSubAgentRunNestsUnderItsTool(t *testing.T) {
	tel := newTelemetry(t)
	tools := otelkit.Instrument(lt.NewFake(map[string]string{"look": "seen"}), tel.opts()...)
	sub := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "l1", Name: "look"}}}},
		lt.Reply("found"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: sub.Send, Tools: tools, AllowMutating: true, Logger: quiet,
		Tracer: otelkit.Agent("searcher", tel.opts()...)})
	require.NoError(t, err)
	top := otelkit.Instrument(spawn, tel.opts()...)
	ctx, end := otelkit.Agent("main", tel.opts()...).StartRun(testContext(t))
	res := llmtoolkit.Execute(ctx, top, llmtoolkit.Call{ID: "s1", Name: agent.SpawnToolName, Arguments: map[string]any{"task": "look", "description": "look"}})
	end(agentloop.RunEnd{})
	require.False(t, res.IsError, res.Content)

	spawnSpan := tel.span(t, "execute_tool "+agent.SpawnToolName)
	run := tel.span(t, "invoke_agent searcher")
	assert.Equal(t, spawnSpan.SpanContext.SpanID(), run.Parent.SpanID(), "the sub-agent's run nests under its tool's span")
	for _, sp := range tel.spans() {
		if sp.Name == "chat" {
			assert.Equal(t, run.SpanContext.SpanID(), sp.Parent.SpanID(), "the sub-agent's model calls nest under its run")
		}
	}
	assert.Equal(t, run.SpanContext.SpanID(), tel.span(t, "execute_tool look").Parent.SpanID())
	for _, p := range tel.toolPoints(t) {
		switch p.attrs["gen_ai.tool.name"] {
		case "look":
			assert.Equal(t, "searcher", p.attrs["gen_ai.agent.name"])
		case agent.SpawnToolName:
			assert.Equal(t, "main", p.attrs["gen_ai.agent.name"])
		}
	}
}

// TestAgentCost: the run's cost, priced by agentloop's table, is on the
// invoke_agent span and in llmtoolkit.agent.cost; an unpriced call is
// named there.
func TestAgentCost(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{Model: "gpt-x", ToolCalls: []llmtoolkit.Call{{ID: "c1", Name: "a"}}, Usage: agentloop.Usage{InputTokens: 1000000, OutputTokens: 100000}}},
		lt.Turn{Response: agentloop.Response{Model: "other", Content: "done", Usage: agentloop.Usage{InputTokens: 10}}},
	)
	tracer := otelkit.Agent("helper", tel.opts(otelkit.WithProviderName("openai"))...)
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Resolver: lt.NewFake(map[string]string{"a": "ok"}), Tracer: tracer, Logger: quiet,
		Prices: agentloop.Prices{"gpt-x": {Input: 2, Output: 8}}})
	require.NoError(t, err)

	run := attrs(tel.span(t, "invoke_agent helper"))
	assert.InDelta(t, 2.8, run["llmtoolkit.cost.usd"], 1e-12, "$2 input + $0.80 output")
	assert.Equal(t, int64(1), run["llmtoolkit.cost.unpriced_calls"])
	assert.Equal(t, []string{"other"}, run["llmtoolkit.cost.missing_prices"])

	points, _ := tel.metricPoints(t, "llmtoolkit.agent.cost")
	require.Len(t, points, 1)
	assert.InDelta(t, 2.8, points[0].sum, 1e-12)
	assert.Equal(t, "helper", points[0].attrs["gen_ai.agent.name"])
	assert.Equal(t, uint64(1), points[0].count)
}
