package mcp

import (
	"context"
	"maps"
	"reflect"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// MetaPropagator carries a trace context across MCP in the params._meta of
// requests, as OpenTelemetry's MCP conventions and MCP's SEP-414 describe
// (the W3C keys traceparent, tracestate and baggage). otelkit.MetaPropagator
// implements it; this package itself depends on no telemetry library.
type MetaPropagator interface {
	// Inject writes the trace context of ctx into meta, a fresh map that
	// is then merged into the _meta of a request about to be sent.
	Inject(ctx context.Context, meta map[string]any)
	// Extract returns ctx with the trace context read from meta, the _meta
	// of a request received (read-only).
	Extract(ctx context.Context, meta map[string]any) context.Context
}

// WithPropagator makes a server ([NewServer], [Serve], [Handler]) read the
// trace context of every request it receives from the request's _meta, so
// that the tool call runs as a child of the caller's span, and a client
// ([Connect]) write the trace context of every request it sends into it.
// Nil, the default, propagates nothing.
func WithPropagator(p MetaPropagator) Option {
	return func(c *config) { c.propagator = p }
}

// extractTraceContext adds to srv a middleware that runs every request it
// receives with the trace context of its _meta.
func extractTraceContext(srv *sdk.Server, p MetaPropagator) {
	if p == nil {
		return
	}
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if params := paramsOf(req); params != nil {
				if meta := params.GetMeta(); len(meta) > 0 {
					ctx = p.Extract(ctx, meta)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// injectTraceContext adds to client a middleware that writes the trace
// context of every request it sends into the request's _meta (a copy: the
// caller's map is not changed).
func injectTraceContext(client *sdk.Client, p MetaPropagator) {
	if p == nil {
		return
	}
	client.AddSendingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if params := paramsOf(req); params != nil {
				carrier := map[string]any{}
				p.Inject(ctx, carrier)
				if len(carrier) > 0 {
					meta := maps.Clone(params.GetMeta())
					if meta == nil {
						meta = make(map[string]any, len(carrier))
					}
					maps.Copy(meta, carrier)
					params.SetMeta(meta)
				}
			}
			return next(ctx, method, req)
		}
	})
}

// paramsOf returns a request's params, or nil when it has none (a nil
// pointer included: its GetMeta would panic).
func paramsOf(req sdk.Request) sdk.Params {
	if req == nil {
		return nil
	}
	if v := reflect.ValueOf(req); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	params := req.GetParams()
	if params == nil {
		return nil
	}
	if v := reflect.ValueOf(params); v.Kind() == reflect.Pointer && v.IsNil() {
		return nil
	}
	return params
}
