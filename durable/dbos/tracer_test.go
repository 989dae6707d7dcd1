package dbos

import (
	"context"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// recordingSpan is a span that keeps the attributes set on it: the span a
// Tracer such as otelkit's starts for a run, without an SDK (the module
// requires only what its code imports).
type recordingSpan struct {
	noop.Span
	sc    oteltrace.SpanContext
	mu    sync.Mutex
	attrs map[string]string
}

func (s *recordingSpan) SpanContext() oteltrace.SpanContext { return s.sc }
func (s *recordingSpan) IsRecording() bool                  { return true }
func (s *recordingSpan) SetAttributes(kv ...attribute.KeyValue) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range kv {
		s.attrs[string(a.Key)] = a.Value.AsString()
	}
}

// spanTracer starts one recordingSpan per run, each in a trace of its own.
type spanTracer struct {
	mu    sync.Mutex
	runs  []*recordingSpan
	count atomic.Uint64
}

func (t *spanTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	n := t.count.Add(1)
	var tid oteltrace.TraceID
	tid[15] = byte(n)
	sc := oteltrace.NewSpanContext(oteltrace.SpanContextConfig{TraceID: tid, SpanID: oteltrace.SpanID{7}, TraceFlags: oteltrace.FlagsSampled})
	s := &recordingSpan{sc: sc, attrs: map[string]string{}}
	t.mu.Lock()
	t.runs = append(t.runs, s)
	t.mu.Unlock()
	return oteltrace.ContextWithSpan(ctx, s), func(agentloop.RunEnd) {}
}

func (t *spanTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	return ctx, func(agentloop.Response, error) {}
}

// TestSpansOfResumedRun: a run with a span-starting tracer (as otelkit's)
// is shut down while it waits for an approval and resumed by another
// engine; the run spans of both attempts (two traces) carry the run's IDs.
func TestSpansOfResumedRun(t *testing.T) {
	tracer := &spanTracer{}
	dir := t.TempDir()
	traced := func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		send, opts, err := approvalAgent(dir)(ctx, run)
		opts.Tracer = tracer
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

	tracer.mu.Lock()
	defer tracer.mu.Unlock()
	require.Len(t, tracer.runs, 2, "one run span per attempt")
	assert.NotEqual(t, tracer.runs[0].sc.TraceID(), tracer.runs[1].sc.TraceID(), "each attempt is a trace of its own")
	for _, s := range tracer.runs {
		s.mu.Lock()
		assert.Equal(t, ConversationID("run-spans"), s.attrs[AttrConversationID])
		assert.Equal(t, "run-spans", s.attrs[AttrRunID])
		s.mu.Unlock()
	}
}
