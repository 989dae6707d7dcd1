package dbos

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestSpansOfResumedRun: a run with otelkit's tracer is shut down while it
// waits for an approval and resumed by another engine; the invoke_agent
// spans of both attempts (two traces) carry the run's IDs.
func TestSpansOfResumedRun(t *testing.T) {
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	dir := t.TempDir()
	traced := func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		send, opts, err := approvalAgent(dir)(ctx, run)
		opts.Tracer = otelkit.Agent("deployer", otelkit.WithTracerProvider(tp))
		return send, opts, err
	}
	url, ctx := "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), context.Background()
	e1 := newEngine(t, url, traced)
	require.NoError(t, e1.Start(ctx, "run-spans", Input{Messages: []agentloop.Message{agentloop.UserMessage("deploy")}}))
	waitPending(t, e1, "run-spans")
	require.NoError(t, e1.Shutdown(10*time.Second))
	e2 := newEngine(t, url, traced)
	defer e2.Shutdown(10 * time.Second)
	require.NoError(t, e2.Approve(ctx, "run-spans", waitPending(t, e2, "run-spans").CallID, agent.Allow()))
	rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err := e2.Result(rctx, "run-spans")
	require.NoError(t, err)

	var runs []tracetest.SpanStub
	for _, s := range exp.GetSpans() {
		if s.Name == "invoke_agent deployer" {
			runs = append(runs, s)
		}
	}
	require.Len(t, runs, 2, "one run span per attempt")
	assert.NotEqual(t, runs[0].SpanContext.TraceID(), runs[1].SpanContext.TraceID(), "each attempt is a trace of its own")
	for _, s := range runs {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.AsString()
		}
		assert.Equal(t, ConversationID("run-spans"), attrs[AttrConversationID])
		assert.Equal(t, "run-spans", attrs[AttrRunID])
	}
}
