package otelkit_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// testTimeout is generous: the machine running the tests may be loaded.
const testTimeout = 60 * time.Second

func testContext(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// telemetry is an SDK set up for one test: spans exported synchronously to
// an in-memory exporter, metrics read on demand by a manual reader.
type telemetry struct {
	exp    *tracetest.InMemoryExporter
	tp     *sdktrace.TracerProvider
	reader *sdkmetric.ManualReader
	mp     *sdkmetric.MeterProvider
}

func newTelemetry(t testing.TB) *telemetry {
	t.Helper()
	tel := &telemetry{exp: tracetest.NewInMemoryExporter(), reader: sdkmetric.NewManualReader()}
	tel.tp = sdktrace.NewTracerProvider(sdktrace.WithSyncer(tel.exp))
	tel.mp = sdkmetric.NewMeterProvider(sdkmetric.WithReader(tel.reader))
	t.Cleanup(func() {
		_ = tel.tp.Shutdown(context.Background())
		_ = tel.mp.Shutdown(context.Background())
	})
	return tel
}

// opts are the options that send an instrumentation's output to tel.
func (tel *telemetry) opts(more ...otelkit.Option) []otelkit.Option {
	return append([]otelkit.Option{otelkit.WithTracerProvider(tel.tp), otelkit.WithMeterProvider(tel.mp)}, more...)
}

// spans returns the spans ended so far, in the order they ended.
func (tel *telemetry) spans() tracetest.SpanStubs { return tel.exp.GetSpans() }

// span returns the one ended span called name.
func (tel *telemetry) span(t testing.TB, name string) tracetest.SpanStub {
	t.Helper()
	var found []tracetest.SpanStub
	for _, s := range tel.spans() {
		if s.Name == name {
			found = append(found, s)
		}
	}
	require.Len(t, found, 1, "spans called %q among %v", name, names(tel.spans()))
	return found[0]
}

func names(spans tracetest.SpanStubs) []string {
	out := make([]string, len(spans))
	for i, s := range spans {
		out[i] = s.Name
	}
	return out
}

// attrs returns a span's attributes by key, as Go values.
func attrs(s tracetest.SpanStub) map[string]any {
	out := map[string]any{}
	for _, kv := range s.Attributes {
		out[string(kv.Key)] = kv.Value.AsInterface()
	}
	return out
}

// toolPoints returns the data points of the gen_ai.execute_tool.duration
// histogram, each with its attributes as Go values.
func (tel *telemetry) toolPoints(t testing.TB) []point {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, tel.reader.Collect(context.Background(), &rm))
	var out []point
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != "gen_ai.execute_tool.duration" {
				continue
			}
			require.Equal(t, "s", m.Unit)
			h, ok := m.Data.(metricdata.Histogram[float64])
			require.True(t, ok, "the duration is a float64 histogram, not %T", m.Data)
			for _, dp := range h.DataPoints {
				p := point{count: dp.Count, sum: dp.Sum, attrs: map[string]any{}}
				for _, kv := range dp.Attributes.ToSlice() {
					p.attrs[string(kv.Key)] = kv.Value.AsInterface()
				}
				out = append(out, p)
			}
		}
	}
	return out
}

type point struct {
	count uint64
	sum   float64
	attrs map[string]any
}
