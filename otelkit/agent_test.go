package otelkit_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

var quiet = slog.New(slog.DiscardHandler)

func prompt() []agentloop.Message { return []agentloop.Message{agentloop.UserMessage("Go.")} }

// parallelFake has tools a and b that only return once both have started:
// they finish only when dispatched in parallel.
func parallelFake(t *testing.T) *lt.Fake {
	var started sync.WaitGroup
	started.Add(2)
	both := make(chan struct{})
	go func() { started.Wait(); close(both) }()
	wait := func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		started.Done()
		select {
		case <-both:
			return "ok", nil
		case <-time.After(30 * time.Second):
			return "", errors.New("the other call never started: the calls did not run in parallel")
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
	return (&lt.Fake{}).Handle("a", wait).Handle("b", wait)
}

// TestAgentRunSpans runs a scripted agent whose first turn calls two tools
// at once, and checks the whole tree: names, kinds, attributes, parents.
func TestAgentRunSpans(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{
			ToolCalls:  []llmtoolkit.Call{{ID: "c1", Name: "a"}, {ID: "c2", Name: "b"}},
			Usage:      agentloop.Usage{InputTokens: 100, OutputTokens: 20},
			StopReason: "tool_calls",
		}},
		lt.Turn{Response: agentloop.Response{Content: "done", Usage: agentloop.Usage{InputTokens: 150, OutputTokens: 5}, StopReason: "stop"}},
	)
	opts := agentloop.Options{
		Resolver:    otelkit.Instrument(parallelFake(t), tel.opts()...),
		Tracer:      otelkit.Agent("coder", tel.opts(otelkit.WithProviderName("openai"), otelkit.WithModel("gpt-test"))...),
		MaxParallel: 4,
		Logger:      quiet,
	}
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, opts)
	require.NoError(t, err)

	spans := tel.spans()
	require.Len(t, spans, 5, "%v", names(spans))
	run := tel.span(t, "invoke_agent coder")
	assert.Equal(t, trace.SpanKindInternal, run.SpanKind)
	assert.False(t, run.Parent.IsValid(), "the run is the root")
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":          "invoke_agent",
		"gen_ai.agent.name":              "coder",
		"gen_ai.provider.name":           "openai",
		"gen_ai.request.model":           "gpt-test",
		"gen_ai.usage.input_tokens":      int64(250),
		"gen_ai.usage.output_tokens":     int64(25),
		"gen_ai.response.finish_reasons": []string{"stop"},
	}, attrs(run))
	assert.Equal(t, codes.Unset, run.Status.Code)

	var chats, tools []tracetest.SpanStub
	for _, s := range spans {
		switch s.Name {
		case "chat gpt-test":
			chats = append(chats, s)
		case "execute_tool a", "execute_tool b":
			tools = append(tools, s)
		}
	}
	require.Len(t, chats, 2)
	require.Len(t, tools, 2)
	for _, s := range append(chats, tools...) {
		assert.Equal(t, run.SpanContext.TraceID(), s.SpanContext.TraceID(), "%s is in the run's trace", s.Name)
		assert.Equal(t, run.SpanContext.SpanID(), s.Parent.SpanID(), "%s is a child of the run", s.Name)
	}
	wantChat := []map[string]any{
		{"gen_ai.usage.input_tokens": int64(100), "gen_ai.usage.output_tokens": int64(20), "gen_ai.response.finish_reasons": []string{"tool_calls"}},
		{"gen_ai.usage.input_tokens": int64(150), "gen_ai.usage.output_tokens": int64(5), "gen_ai.response.finish_reasons": []string{"stop"}},
	}
	for i, s := range chats {
		assert.Equal(t, trace.SpanKindClient, s.SpanKind)
		want := map[string]any{"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai", "gen_ai.request.model": "gpt-test"}
		for k, v := range wantChat[i] {
			want[k] = v
		}
		assert.Equal(t, want, attrs(s))
	}
	// Parallel dispatch: the tool spans overlap, and both lie between the
	// two model calls.
	assert.True(t, tools[0].StartTime.Before(tools[1].EndTime) && tools[1].StartTime.Before(tools[0].EndTime), "the tool spans overlap")
	for _, s := range tools {
		assert.False(t, s.StartTime.Before(chats[0].EndTime), "%s starts after the first model call", s.Name)
		assert.False(t, s.EndTime.After(chats[1].StartTime), "%s ends before the second model call", s.Name)
		assert.Equal(t, trace.SpanKindInternal, s.SpanKind)
	}
	pts := tel.toolPoints(t)
	require.Len(t, pts, 2)
	for _, p := range pts {
		assert.Equal(t, "coder", p.attrs["gen_ai.agent.name"], "the tool metric names the agent")
	}
}

// TestSubAgentNestsUnderToolSpan runs an agent from inside a tool: the
// sub-agent's run is a child of the tool's span.
func TestSubAgentNestsUnderToolSpan(t *testing.T) {
	tel := newTelemetry(t)
	sub := otelkit.Agent("researcher", tel.opts()...)
	fake := (&lt.Fake{}).Handle("delegate", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		model := lt.NewScriptedModel(t, lt.Reply("found it"))
		resp, _, err := agentloop.Run(ctx, prompt(), model.Send, agentloop.Options{Tracer: sub, Logger: quiet})
		return resp.Content, err
	})
	model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("delegate", nil)), lt.Reply("done"))
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
		Resolver: otelkit.Instrument(fake, tel.opts()...),
		Tracer:   otelkit.Agent("lead", tel.opts()...),
		Logger:   quiet,
	})
	require.NoError(t, err)

	lead := tel.span(t, "invoke_agent lead")
	tool := tel.span(t, "execute_tool delegate")
	subRun := tel.span(t, "invoke_agent researcher")
	assert.Equal(t, lead.SpanContext.SpanID(), tool.Parent.SpanID())
	assert.Equal(t, tool.SpanContext.SpanID(), subRun.Parent.SpanID(), "the sub-agent nests under its tool's span")
	assert.Equal(t, lead.SpanContext.TraceID(), subRun.SpanContext.TraceID())
	assert.Len(t, tel.spans(), 6, "%v", names(tel.spans())) // 2 runs, 3 chats, 1 tool
}

func TestAgentRunErrors(t *testing.T) {
	boom := errors.New("503 from the provider")
	cases := []struct {
		name      string
		turns     []lt.Turn
		tools     *lt.Fake
		opts      []otelkit.Option
		runClass  string
		runDesc   string
		chatClass string // error.type of the last chat span, "" for none
	}{
		{
			name:      "model error",
			turns:     []lt.Turn{lt.Fail(boom)},
			runClass:  otelkit.ClassModelError,
			chatClass: "_OTHER",
		},
		{
			name: "model panic",
			turns: []lt.Turn{lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
				panic("bug")
			})},
			runClass:  otelkit.ClassModelError,
			chatClass: otelkit.ClassPanic,
		},
		{
			name: "circuit breaker",
			turns: []lt.Turn{
				lt.CallTools(lt.Call("f", nil)), lt.CallTools(lt.Call("f", nil)), lt.CallTools(lt.Call("f", nil)),
			},
			tools:    (&lt.Fake{}).Fails("f", errors.New("wrong password sk-live-123456")),
			runClass: otelkit.ClassCircuitBreaker,
			runDesc:  `agentloop: circuit breaker tripped: tool "f" failed 3 times in a row with the same error`,
		},
		{
			name: "circuit breaker with content",
			turns: []lt.Turn{
				lt.CallTools(lt.Call("f", nil)), lt.CallTools(lt.Call("f", nil)), lt.CallTools(lt.Call("f", nil)),
			},
			tools:    (&lt.Fake{}).Fails("f", errors.New("no such file")),
			opts:     []otelkit.Option{otelkit.WithCaptureContent()},
			runClass: otelkit.ClassCircuitBreaker,
			runDesc:  `agentloop: circuit breaker tripped: tool "f" failed 3 times in a row with the same error: no such file`,
		},
		{
			name:     "max iterations",
			turns:    []lt.Turn{lt.CallTools(lt.Call("ok", nil))},
			tools:    lt.NewFake(map[string]string{"ok": "fine"}),
			runClass: otelkit.ClassMaxIterations,
		},
		{
			name:     "halted",
			turns:    []lt.Turn{lt.CallTools(lt.Call("stop", nil))},
			tools:    (&lt.Fake{}).Fails("stop", llmtoolkit.Halt("user asked")),
			runClass: otelkit.ClassHalted,
			runDesc:  `agentloop: halted by tool "stop"`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			model := lt.NewScriptedModel(t, tc.turns...)
			opts := agentloop.Options{Tracer: otelkit.Agent("a", tel.opts(tc.opts...)...), Logger: quiet, MaxIterations: len(tc.turns)}
			if tc.tools != nil {
				opts.Resolver = tc.tools
			}
			_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, opts)
			require.Error(t, err)

			run := tel.span(t, "invoke_agent a")
			assert.Equal(t, codes.Error, run.Status.Code)
			assert.Equal(t, tc.runClass, attrs(run)["error.type"])
			if tc.runDesc != "" {
				assert.Equal(t, tc.runDesc, run.Status.Description)
			}
			if tc.chatClass != "" {
				var chat tracetest.SpanStub
				for _, s := range tel.spans() {
					if s.Name == "chat" {
						chat = s
					}
				}
				assert.Equal(t, codes.Error, chat.Status.Code)
				assert.Equal(t, tc.chatClass, attrs(chat)["error.type"])
				assert.Equal(t, trace.SpanKindClient, chat.SpanKind)
			}
		})
	}
}

func TestAgentWithoutName(t *testing.T) {
	tel := newTelemetry(t)
	model := lt.NewScriptedModel(t, lt.Turn{Response: agentloop.Response{Content: "hi"}})
	_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{Tracer: otelkit.Agent("", tel.opts()...), Logger: quiet})
	require.NoError(t, err)
	run := tel.span(t, "invoke_agent")
	assert.Equal(t, map[string]any{"gen_ai.operation.name": "invoke_agent"}, attrs(run), "no usage reported, no finish reason: none recorded")
	chat := tel.span(t, "chat")
	assert.Equal(t, map[string]any{"gen_ai.operation.name": "chat"}, attrs(chat))
}
