package otelkit_test

import (
	"context"
	"testing"

	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// BenchmarkToolCall measures what Instrument adds to one call through
// llmtoolkit.Execute of an instant tool: bare (not wrapped), with no
// provider set (the global ones untouched), with explicit no-op providers,
// and with the SDK exporting every span to an in-memory exporter and
// recording the histogram (with and without WithCaptureContent).
func BenchmarkToolCall(b *testing.B) {
	ctx := context.Background()
	sdkResolver := func(b *testing.B, more ...otelkit.Option) llmtoolkit.Resolver {
		exp := tracetest.NewInMemoryExporter()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
		b.Cleanup(func() {
			_ = tp.Shutdown(ctx)
			_ = mp.Shutdown(ctx)
		})
		r := otelkit.Instrument(newOKResolver(), append([]otelkit.Option{otelkit.WithTracerProvider(tp), otelkit.WithMeterProvider(mp)}, more...)...)
		// Keep the exporter's memory bounded: forget the spans now and then.
		n := 0
		return llmtoolkit.ResolverFunc(func(ctx context.Context, c llmtoolkit.Call) (string, error) {
			if n++; n%4096 == 0 {
				exp.Reset()
			}
			return r.Resolve(ctx, c)
		})
	}
	cases := []struct {
		name string
		r    func(b *testing.B) llmtoolkit.Resolver
	}{
		{"bare", func(*testing.B) llmtoolkit.Resolver { return newOKResolver() }},
		{"no-provider", func(*testing.B) llmtoolkit.Resolver { return otelkit.Instrument(newOKResolver()) }},
		{"noop-provider", func(*testing.B) llmtoolkit.Resolver {
			return otelkit.Instrument(newOKResolver(), otelkit.WithTracerProvider(tracenoop.NewTracerProvider()), otelkit.WithMeterProvider(metricnoop.NewMeterProvider()))
		}},
		{"sdk-inmemory", func(b *testing.B) llmtoolkit.Resolver { return sdkResolver(b) }},
		{"sdk-inmemory-content", func(b *testing.B) llmtoolkit.Resolver { return sdkResolver(b, otelkit.WithCaptureContent()) }},
	}
	call := llmtoolkit.Call{ID: "c1", Name: "ok", Arguments: map[string]any{"path": "a.txt", "limit": 10.0}}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			r := tc.r(b)
			b.ReportAllocs()
			for b.Loop() {
				if res := llmtoolkit.Execute(ctx, r, call); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}

// BenchmarkResolve isolates the wrapper's own cost when nothing listens:
// Resolve called directly, bare and wrapped.
func BenchmarkResolve(b *testing.B) {
	ctx := context.Background()
	cases := []struct {
		name string
		r    llmtoolkit.Resolver
	}{
		{"bare", newOKResolver()},
		{"no-provider", otelkit.Instrument(newOKResolver())},
		{"noop-provider", otelkit.Instrument(newOKResolver(), otelkit.WithTracerProvider(tracenoop.NewTracerProvider()), otelkit.WithMeterProvider(metricnoop.NewMeterProvider()))},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := tc.r.Resolve(ctx, okCall); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAgentRun measures a run of 2 iterations (2 tool calls, then an
// answer) without a tracer, with an Agent and no provider set, and with
// the SDK exporting to an in-memory exporter (tools instrumented too).
func BenchmarkAgentRun(b *testing.B) {
	ctx := context.Background()
	calls := []llmtoolkit.Call{{ID: "1", Name: "ok"}, {ID: "2", Name: "ok"}}
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		if len(msgs) > 1 {
			return agentloop.Response{Content: "done", StopReason: "stop"}, nil
		}
		return agentloop.Response{ToolCalls: calls, StopReason: "tool_calls", Usage: agentloop.Usage{InputTokens: 10, OutputTokens: 2}}, nil
	}
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	b.Cleanup(func() { _ = tp.Shutdown(ctx) })
	cases := []struct {
		name string
		opts agentloop.Options
	}{
		{"no-tracer", agentloop.Options{Resolver: newOKResolver(), MaxParallel: 1, Logger: quiet}},
		{"no-provider", agentloop.Options{Resolver: otelkit.Instrument(newOKResolver()), Tracer: otelkit.Agent("a"), MaxParallel: 1, Logger: quiet}},
		{"sdk-inmemory", agentloop.Options{Resolver: otelkit.Instrument(newOKResolver(), otelkit.WithTracerProvider(tp)),
			Tracer: otelkit.Agent("a", otelkit.WithTracerProvider(tp)), MaxParallel: 1, Logger: quiet}},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				if _, _, err := agentloop.Run(ctx, prompt(), send, tc.opts); err != nil {
					b.Fatal(err)
				}
				if n++; n%1024 == 0 {
					exp.Reset()
				}
			}
		})
	}
}
