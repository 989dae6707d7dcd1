package otelkit

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
)

// maxRecipeRuns bounds how many recipe spans are kept open waiting for
// their recipe call's end (a recipe call this Resolver is never told of
// would otherwise keep its span forever).
const maxRecipeRuns = 1024

// recipeSpans holds the spans of recipe calls whose steps are running, by
// run ID, until [llmtoolkit.Execute] tells the recipe tool's observers that
// the recipe call ended.
type recipeSpans struct {
	mu    sync.Mutex
	byRun map[string]callSpan
	order []string // run IDs, oldest first
}

// stepParent returns ctx with, as its current span, the span of the recipe
// call ctx is a step of, starting it if this is the run's first step. It
// returns ctx as it is outside a recipe run, and for a recipe tool res does
// not offer (it would not be told when that call ends).
func (res *Resolver) stepParent(ctx context.Context) context.Context {
	run, ok := llmtoolkit.RecipeRunFrom(ctx)
	if !ok {
		return ctx
	}
	def, offered := res.definition(run.Tool)
	if !offered || def.Recipe == nil {
		return ctx
	}
	rs := &res.recipes
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cs, ok := rs.byRun[run.ID]; ok {
		return trace.ContextWithSpan(ctx, cs.span)
	}
	start := time.Now()
	call := llmtoolkit.Call{ID: run.CallID, Name: run.Tool}
	spanCtx, span := res.tr.tracer.Start(ctx, spanName(opExecuteTool, run.Tool),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start),
		trace.WithAttributes(res.toolAttributes(run.Tool, run.CallID, def)...))
	if rs.byRun == nil {
		rs.byRun = map[string]callSpan{}
	}
	if len(rs.order) >= maxRecipeRuns {
		oldest := rs.order[0]
		rs.order = rs.order[1:]
		lost := rs.byRun[oldest]
		delete(rs.byRun, oldest)
		lost.span.End()
		otel.Handle(fmt.Errorf("otelkit: the end of recipe call %q (run %s) was not observed; its span was ended after %d newer runs", lost.call.Name, oldest, maxRecipeRuns))
	}
	rs.order = append(rs.order, run.ID)
	rs.byRun[run.ID] = callSpan{ctx: spanCtx, span: span, call: call, def: def, start: start}
	return trace.ContextWithSpan(ctx, span)
}

// take returns and forgets a run's recipe span.
func (rs *recipeSpans) take(run string) (callSpan, bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	cs, ok := rs.byRun[run]
	if !ok {
		return callSpan{}, false
	}
	delete(rs.byRun, run)
	if i := slices.Index(rs.order, run); i >= 0 {
		rs.order = slices.Delete(rs.order, i, i+1)
	}
	return cs, true
}
