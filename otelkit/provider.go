package otelkit

import (
	"fmt"
	"reflect"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/llmtoolkit/llmtoolkit/internal/buildinfo"
)

// globalDefault is the global tracer provider the otel package starts with:
// a delegate whose spans record nothing until the host sets a provider
// with otel.SetTracerProvider. Nil if it could not be recognised (then
// every call is traced through the global provider, which is correct, only
// slower when nothing is set).
var globalDefault = initialGlobal()

// globalPkg is the package of the otel package's delegating providers.
const globalPkg = "go.opentelemetry.io/otel/internal/global"

func initialGlobal() trace.TracerProvider {
	tp := otel.GetTracerProvider()
	if t := reflect.TypeOf(tp); t != nil && t.Kind() == reflect.Pointer && t.Elem().PkgPath() == globalPkg {
		return tp
	}
	return nil // already set by a package initialised before this one
}

// tracing is where one instrumentation's spans go, and whether anything
// listens.
type tracing struct {
	tracer trace.Tracer
	global bool // tracer comes from the global provider
	off    bool // a no-op provider was given
}

func newTracing(tp trace.TracerProvider) tracing {
	global := tp == nil
	if global {
		tp = otel.GetTracerProvider()
	}
	_, off := tp.(noop.TracerProvider)
	return tracing{
		tracer: tp.Tracer(scopeName, trace.WithInstrumentationVersion(buildinfo.Version()), trace.WithSchemaURL(schemaURL)),
		global: global,
		off:    off,
	}
}

// active reports whether spans started now may be recorded. It costs an
// atomic load: with no provider set, callers skip all span work, so that
// the instrumentation costs nothing.
func (t *tracing) active() bool {
	if t.off {
		return false
	}
	if t.global && globalDefault != nil {
		// The delegate's identity, compared with a pointer: never panics.
		return otel.GetTracerProvider() != globalDefault
	}
	return true
}

// newToolHistogram makes the gen_ai.execute_tool.duration histogram on mp,
// or on the global meter provider when mp is nil.
func newToolHistogram(mp metric.MeterProvider) metric.Float64Histogram {
	return newHistogram(mp, metricToolDuration, metricToolDurationUnit, metricToolDurationDesc, toolDurationBuckets)
}

// newHistogram makes a histogram on mp, or on the global meter provider
// when mp is nil. An instrument the provider refuses is reported to
// otel.Handle and replaced by a no-op one.
func newHistogram(mp metric.MeterProvider, name, unit, desc string, buckets []float64) metric.Float64Histogram {
	return instrument[metric.Float64Histogram](mp, name, metricnoop.Float64Histogram{}, func(m metric.Meter) (metric.Float64Histogram, error) {
		return m.Float64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
	})
}

// newIntHistogram is newHistogram for integer values.
func newIntHistogram(mp metric.MeterProvider, name, unit, desc string, buckets []float64) metric.Int64Histogram {
	return instrument[metric.Int64Histogram](mp, name, metricnoop.Int64Histogram{}, func(m metric.Meter) (metric.Int64Histogram, error) {
		return m.Int64Histogram(name, metric.WithUnit(unit), metric.WithDescription(desc), metric.WithExplicitBucketBoundaries(buckets...))
	})
}

// instrument makes an instrument with create on this package's meter of mp
// (the global meter provider when nil); one the provider refuses is
// reported to otel.Handle and, when none came back, replaced by noop.
func instrument[H any](mp metric.MeterProvider, name string, noop H, create func(metric.Meter) (H, error)) H {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	h, err := create(mp.Meter(scopeName, metric.WithInstrumentationVersion(buildinfo.Version()), metric.WithSchemaURL(schemaURL)))
	if err != nil {
		otel.Handle(fmt.Errorf("otelkit: creating the %s histogram: %w", name, err))
		if any(h) == nil {
			return noop
		}
	}
	return h
}
