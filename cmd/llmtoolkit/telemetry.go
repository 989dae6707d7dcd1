package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// telemetryFlush bounds the time spent sending the last spans when a
// command ends, so that an unreachable collector cannot hold it.
const telemetryFlush = 5 * time.Second

// telemetry is the OpenTelemetry setup of one command: spans exported over
// OTLP/HTTP when the standard environment asks for it, nothing otherwise.
type telemetry struct {
	tp  trace.TracerProvider
	sdk *sdktrace.TracerProvider // nil when off
}

// otlpEnabled reports whether the environment configures an OTLP endpoint
// for traces and does not disable the SDK.
func otlpEnabled() bool {
	if disabled, _ := strconv.ParseBool(os.Getenv("OTEL_SDK_DISABLED")); disabled {
		return false
	}
	return os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || os.Getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
}

// startTelemetry exports spans with OTLP over HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is
// set, configured by the standard OTEL_* variables (headers, timeout,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES; the service name defaults to
// "llmtoolkit"). Otherwise it sets up nothing and says nothing. Export
// errors are reported by report.
func startTelemetry(ctx context.Context, report func(error)) (*telemetry, error) {
	if !otlpEnabled() {
		return &telemetry{tp: noop.NewTracerProvider()}, nil
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"} {
		if p := os.Getenv(name); p != "" && !strings.HasPrefix(p, "http/") {
			return nil, fmt.Errorf("%s is %q, but llmtoolkit exports over HTTP only; unset it or set it to http/protobuf", name, p)
		}
	}
	exp, err := otlptracehttp.New(ctx)
	if err != nil {
		return nil, fmt.Errorf("setting up the OTLP trace exporter: %w", err)
	}
	res, err := resource.New(ctx,
		resource.WithAttributes(attribute.String("service.name", "llmtoolkit")),
		resource.WithFromEnv(), // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES win
		resource.WithTelemetrySDK())
	if err != nil && res == nil {
		return nil, fmt.Errorf("describing the service for OpenTelemetry: %w", err)
	}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(report))
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return &telemetry{tp: tp, sdk: tp}, nil
}

// instrument wraps r so that each call is a span (a no-op when off).
func (t *telemetry) instrument(r llmtoolkit.Resolver) llmtoolkit.Resolver {
	return otelkit.Instrument(r,
		otelkit.WithTracerProvider(t.tp),
		otelkit.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelkit.WithErrorClass(otelkit.ClassDenied, codetools.ErrOutsideRoot, codetools.ErrBlockedAddress))
}

// mcpOptions are the options that make an MCP server continue its
// clients' traces.
func (t *telemetry) mcpOptions() []mcp.Option {
	if t.sdk == nil {
		return nil
	}
	w3c := propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
	return []mcp.Option{mcp.WithPropagator(otelkit.NewMetaPropagator(w3c))}
}

// close sends the spans not yet exported and stops the exporter, waiting
// at most telemetryFlush.
func (t *telemetry) close() error {
	if t.sdk == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), telemetryFlush)
	defer cancel()
	if err := t.sdk.Shutdown(ctx); err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("exporting the last spans: gave up after %v: %w", telemetryFlush, err)
		}
		return fmt.Errorf("exporting the last spans: %w", err)
	}
	return nil
}
