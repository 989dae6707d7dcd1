package otelkit

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"
)

// MetaPropagator carries the trace context of MCP requests in their
// params._meta, as OpenTelemetry's MCP conventions and MCP's SEP-414 say:
// under the unprefixed W3C keys traceparent, tracestate and baggage. It
// implements mcp.MetaPropagator; give it to both sides with
// mcp.WithPropagator, and a tool call served over MCP appears in the
// caller's trace: the server's execute_tool span is a child of the client's.
// Build it with [NewMetaPropagator].
type MetaPropagator struct {
	p propagation.TextMapPropagator // nil: see NewMetaPropagator
}

// w3c is the propagator of the W3C Trace Context and Baggage headers.
var w3c = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// NewMetaPropagator returns a [MetaPropagator] that uses p. With p nil, it
// uses the global propagator (otel.GetTextMapPropagator) when the host has
// set one, else W3C Trace Context and Baggage, the formats MCP names.
func NewMetaPropagator(p propagation.TextMapPropagator) MetaPropagator {
	return MetaPropagator{p: p}
}

func (m MetaPropagator) propagator() propagation.TextMapPropagator {
	if m.p != nil {
		return m.p
	}
	if g := otel.GetTextMapPropagator(); len(g.Fields()) > 0 {
		return g
	}
	return w3c
}

// Inject writes the trace context of ctx into meta, the _meta of a request
// about to be sent. It writes nothing when ctx has no span.
func (m MetaPropagator) Inject(ctx context.Context, meta map[string]any) {
	if meta == nil {
		return
	}
	m.propagator().Inject(ctx, metaCarrier(meta))
}

// Extract returns ctx with the remote trace context read from meta, the
// _meta of a request received; ctx as it is when meta holds none.
func (m MetaPropagator) Extract(ctx context.Context, meta map[string]any) context.Context {
	if len(meta) == 0 {
		return ctx
	}
	return m.propagator().Extract(ctx, metaCarrier(meta))
}

// metaCarrier adapts an MCP _meta object to propagation.TextMapCarrier:
// only string values are read.
type metaCarrier map[string]any

func (c metaCarrier) Get(key string) string {
	s, _ := c[key].(string)
	return s
}

func (c metaCarrier) Set(key, value string) { c[key] = value }

func (c metaCarrier) Keys() []string {
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	return keys
}
