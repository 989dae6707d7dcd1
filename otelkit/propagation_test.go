package otelkit_test

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

var _ mcp.MetaPropagator = otelkit.MetaPropagator{}

// connectMCP serves server over an in-memory MCP connection and returns a
// client for it; both sides get opts.
func connectMCP(t *testing.T, server llmtoolkit.Resolver, opts ...mcp.Option) *mcp.Client {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(server, opts...).Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := mcp.Connect(testContext(t), ct, opts...)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestMCPPropagation runs an agent whose tool is served over MCP: with the
// propagator on both sides, the server's tool span is a child of the
// client's, in the run's trace.
func TestMCPPropagation(t *testing.T) {
	for _, propagate := range []bool{true, false} {
		t.Run(map[bool]string{true: "propagated", false: "not propagated"}[propagate], func(t *testing.T) {
			clientTel, serverTel := newTelemetry(t), newTelemetry(t)
			var opts []mcp.Option
			if propagate {
				opts = append(opts, mcp.WithPropagator(otelkit.NewMetaPropagator(nil)))
			}
			remote := otelkit.Instrument(lt.NewFake(map[string]string{"remote_echo": "pong"}), serverTel.opts()...)
			client := connectMCP(t, remote, opts...)
			model := lt.NewScriptedModel(t, lt.CallTools(lt.Call("remote_echo", nil)), lt.Reply("done"))
			_, _, err := agentloop.Run(testContext(t), prompt(), model.Send, agentloop.Options{
				Resolver: otelkit.Instrument(client, clientTel.opts()...),
				Tracer:   otelkit.Agent("caller", clientTel.opts()...),
				Logger:   quiet,
			})
			require.NoError(t, err)

			run := clientTel.span(t, "invoke_agent caller")
			callerSide := clientTel.span(t, "execute_tool remote_echo")
			serverSide := serverTel.span(t, "execute_tool remote_echo")
			assert.Equal(t, run.SpanContext.SpanID(), callerSide.Parent.SpanID())
			if propagate {
				assert.Equal(t, callerSide.SpanContext.TraceID(), serverSide.SpanContext.TraceID(), "the served call is in the caller's trace")
				assert.Equal(t, callerSide.SpanContext.SpanID(), serverSide.Parent.SpanID(), "its parent is the caller's tool span")
				assert.True(t, serverSide.Parent.IsRemote())
			} else {
				assert.NotEqual(t, callerSide.SpanContext.TraceID(), serverSide.SpanContext.TraceID())
				assert.False(t, serverSide.Parent.IsValid(), "without the propagator the served call starts its own trace")
			}
		})
	}
}

func TestMetaPropagatorRoundTrip(t *testing.T) {
	tel := newTelemetry(t)
	ctx, span := tel.tp.Tracer("test").Start(testContext(t), "parent")
	defer span.End()
	member, err := baggage.NewMember("user", "ada")
	require.NoError(t, err)
	bag, err := baggage.New(member)
	require.NoError(t, err)
	ctx = baggage.ContextWithBaggage(ctx, bag)

	p := otelkit.NewMetaPropagator(nil) // W3C by default
	meta := map[string]any{"progressToken": 7.0}
	p.Inject(ctx, meta)
	sc := span.SpanContext()
	assert.Equal(t, "00-"+sc.TraceID().String()+"-"+sc.SpanID().String()+"-01", meta["traceparent"])
	assert.Equal(t, "user=ada", meta["baggage"])
	assert.Equal(t, 7.0, meta["progressToken"], "other keys are kept")

	got := p.Extract(context.Background(), meta)
	remote := trace.SpanContextFromContext(got)
	assert.True(t, remote.IsRemote())
	assert.Equal(t, sc.TraceID(), remote.TraceID())
	assert.Equal(t, sc.SpanID(), remote.SpanID())
	assert.Equal(t, "ada", baggage.FromContext(got).Member("user").Value())

	// No span: nothing injected; no traceparent, or a malformed one: ctx unchanged.
	empty := map[string]any{}
	p.Inject(context.Background(), empty)
	assert.Empty(t, empty)
	for _, m := range []map[string]any{nil, {"traceparent": 12.0}, {"traceparent": "garbage"}} {
		assert.False(t, trace.SpanContextFromContext(p.Extract(context.Background(), m)).IsValid(), "%v", m)
	}

	// An explicit propagator is used as given.
	only := otelkit.NewMetaPropagator(propagation.TraceContext{})
	meta = map[string]any{}
	only.Inject(ctx, meta)
	assert.Contains(t, meta, "traceparent")
	assert.NotContains(t, meta, "baggage")
}
