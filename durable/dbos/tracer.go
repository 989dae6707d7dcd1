package dbos

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"go.opentelemetry.io/otel/attribute"
	oteltrace "go.opentelemetry.io/otel/trace"
)

// The span attributes that tie each attempt's spans to its run.
const (
	// AttrConversationID is the OpenTelemetry GenAI attribute
	// gen_ai.conversation.id: the run's [ConversationID].
	AttrConversationID = "gen_ai.conversation.id"
	// AttrRunID is the run's ID, as given to [Engine.Start].
	AttrRunID = "llmtoolkit.run.id"
)

// runTracer wraps the run's Tracer (package otelkit's, say): it puts the
// run's IDs on the run's span, so that the spans of every attempt of a run
// (each attempt is a new span, in a new trace) are found by the same IDs.
type runTracer struct {
	agentloop.Tracer
	attrs []attribute.KeyValue
}

func newRunTracer(t agentloop.Tracer, run Run) agentloop.Tracer {
	if t == nil {
		return nil
	}
	return &runTracer{Tracer: t, attrs: []attribute.KeyValue{
		attribute.String(AttrConversationID, run.ConversationID),
		attribute.String(AttrRunID, run.ID),
	}}
}

// StartRun starts the wrapped tracer's run and tags the span it started.
func (t *runTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	rctx, end := t.Tracer.StartRun(ctx)
	if span := oteltrace.SpanFromContext(rctx); span.SpanContext().IsValid() && span != oteltrace.SpanFromContext(ctx) {
		span.SetAttributes(t.attrs...)
	}
	return rctx, end
}

// ContextChanged passes a clearing, spill or compaction on to the wrapped
// tracer when it records them (agentloop.ContextTracer), so that wrapping
// it does not hide them.
func (t *runTracer) ContextChanged(ctx context.Context, c agentloop.ContextChange) {
	if ct, ok := t.Tracer.(agentloop.ContextTracer); ok {
		ct.ContextChanged(ctx, c)
	}
}
