package otelkit

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// Checkpoints returns a [checkpoint.Tracer] (give it to checkpoint.New
// with checkpoint.WithTracer) that makes a span of every checkpoint Save
// and Rewind: "checkpoint save" and "checkpoint rewind", internal spans
// under the caller's (the execute_tool span of the call whose turn is
// checkpointed), with the root, the checkpoint's id and kind, the entries
// recorded, the files hashed and bytes stored (save), the changes and what
// could not be restored (rewind), and the error, scrubbed of URL
// passwords. Of the options it reads WithTracerProvider.
func Checkpoints(opts ...Option) checkpoint.Tracer {
	c := newConfig(opts)
	return &checkpointTracer{tr: newTracing(c.tp)}
}

type checkpointTracer struct{ tr tracing }

func (t *checkpointTracer) StartCheckpoint(ctx context.Context, op, root string) (context.Context, func(checkpoint.Outcome)) {
	if !t.tr.active() {
		return ctx, func(checkpoint.Outcome) {}
	}
	ctx, span := t.tr.tracer.Start(ctx, spanCheckpointPrefix+op, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(keyCheckpointRoot.String(root)))
	return ctx, func(o checkpoint.Outcome) {
		attrs := []attribute.KeyValue{keyCheckpointKind.String(string(o.Kind)), keyCheckpointEntries.Int(o.Entries)}
		if o.ID != "" {
			attrs = append(attrs, keyCheckpointID.String(o.ID))
		}
		if op == "save" {
			attrs = append(attrs, keyCheckpointHashed.Int(o.Hashed), keyCheckpointStored.Int64(o.StoredBytes))
		} else {
			attrs = append(attrs, keyCheckpointChanges.Int(o.Changes), keyCheckpointSkipped.Int(o.Skipped), keyCheckpointDryRun.Bool(o.DryRun))
		}
		span.SetAttributes(attrs...)
		if o.Err != nil {
			msg := redact.URLPasswords(o.Err.Error(), Redacted)
			span.SetAttributes(keyErrorType.String(errorTypeFallback))
			span.SetStatus(codes.Error, msg)
		}
		span.End()
	}
}
