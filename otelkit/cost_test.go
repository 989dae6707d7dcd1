package otelkit_test

import (
	"context"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// okResolver is the cheapest resolver with one listed tool, "ok", whose
// schema accepts any object: what is measured is the instrumentation.
type okResolver struct{ tools []llmtoolkit.Tool }

func newOKResolver() *okResolver {
	return &okResolver{tools: []llmtoolkit.Tool{llmtoolkit.MustTool("ok", "Answers ok.", map[string]any{"type": "object"})}}
}

func (r *okResolver) Tools() []llmtoolkit.Tool { return r.tools }

func (r *okResolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	if name == "ok" {
		return r.tools[0], true
	}
	return llmtoolkit.Tool{}, false
}

func (r *okResolver) Resolve(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil }

var okCall = llmtoolkit.Call{ID: "c1", Name: "ok", Arguments: map[string]any{}}

// TestNoProviderNoAllocation checks the promise of the no-op path: with no
// provider set (the global ones untouched: no test of this package sets
// them in process), an instrumented call allocates exactly what a bare one
// does, and so does an agent run with an unnamed tracer.
func TestNoProviderNoAllocation(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts are not stable under the race detector")
	}
	ctx := context.Background()
	bare := newOKResolver()
	cases := map[string]llmtoolkit.Resolver{
		"global providers": otelkit.Instrument(newOKResolver()),
		"no-op providers": otelkit.Instrument(newOKResolver(),
			otelkit.WithTracerProvider(tracenoop.NewTracerProvider()), otelkit.WithMeterProvider(metricnoop.NewMeterProvider())),
	}
	want := testing.AllocsPerRun(200, func() { llmtoolkit.Execute(ctx, bare, okCall) })
	for name, r := range cases {
		got := testing.AllocsPerRun(200, func() { llmtoolkit.Execute(ctx, r, okCall) })
		assert.Equal(t, want, got, "%s: allocations per call", name)
	}

	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{Content: "hi"}, nil
	}
	run := func(tr agentloop.Tracer) func() {
		opts := agentloop.Options{Logger: quiet}
		if tr != nil {
			opts.Tracer = tr
		}
		return func() { _, _, _ = agentloop.Run(ctx, prompt(), send, opts) }
	}
	wantRun := testing.AllocsPerRun(100, run(nil))
	assert.Equal(t, wantRun, testing.AllocsPerRun(100, run(otelkit.Agent(""))), "an unnamed agent's run")
	assert.Equal(t, wantRun+1, testing.AllocsPerRun(100, run(otelkit.Agent("named"))),
		"a named agent's run carries its name for the tool metric: one allocation")
}

// TestGlobalProviderSetLater checks, in a child process (the global
// provider cannot be unset), that a Resolver built before the host sets the
// global providers starts tracing and measuring once they are set.
func TestGlobalProviderSetLater(t *testing.T) {
	if os.Getenv("OTELKIT_GLOBAL_CHILD") == "1" {
		globalChild(t)
		return
	}
	cmd := exec.CommandContext(testContext(t), os.Args[0], "-test.run=^TestGlobalProviderSetLater$", "-test.count=1")
	cmd.Env = append(os.Environ(), "OTELKIT_GLOBAL_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	assert.Contains(t, string(out), "PASS")
}

func globalChild(t *testing.T) {
	ctx := context.Background()
	r := otelkit.Instrument(newOKResolver())
	agent := otelkit.Agent("a")
	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{Content: "hi"}, nil
	}
	plain := newOKResolver()
	bare := testing.AllocsPerRun(50, func() { llmtoolkit.Execute(ctx, plain, okCall) })
	require.Equal(t, bare, testing.AllocsPerRun(50, func() { llmtoolkit.Execute(ctx, r, okCall) }), "nothing set yet: no cost")

	exp := tracetest.NewInMemoryExporter()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp)))
	reader := sdkmetric.NewManualReader()
	otel.SetMeterProvider(sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)))

	_, _, err := agentloop.Run(ctx, prompt(), send, agentloop.Options{Tracer: agent, Logger: quiet})
	require.NoError(t, err)
	res := llmtoolkit.Execute(ctx, r, okCall)
	require.False(t, res.IsError)
	assert.ElementsMatch(t, []string{"chat", "invoke_agent a", "execute_tool ok"}, names(exp.GetSpans()))
	tel := &telemetry{exp: exp, reader: reader}
	assert.Len(t, tel.toolPoints(t), 1)
}
