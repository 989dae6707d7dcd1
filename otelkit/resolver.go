package otelkit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
)

// Resolver is an [llmtoolkit.Resolver] that traces and measures every call
// of the resolver it wraps. Build it with [Instrument]. It is safe for
// concurrent use.
//
// Like package trace's Recorder, it lists the wrapped resolver's tools with
// itself added to each definition's [llmtoolkit.Tool.Observers], so that a
// call [llmtoolkit.Execute] answers without resolving it (refused by
// validation, or run as a recipe) still gets its span, whatever wraps the
// Resolver.
type Resolver struct {
	r       llmtoolkit.Resolver
	tools   *llmtoolkit.ObservedTools // the wrapped resolver's, observed by res
	cfg     config
	tr      tracing
	hist    metric.Float64Histogram
	recipes recipeSpans
}

// Instrument wraps r so that every call of its tools is one span and one
// measurement, following the OpenTelemetry GenAI conventions (version
// [SemConvVersion]):
//
//   - The span is named "execute_tool NAME", of kind INTERNAL, with
//     gen_ai.operation.name "execute_tool", gen_ai.tool.name,
//     gen_ai.tool.call.id (when the call has one), gen_ai.tool.description
//     and gen_ai.tool.type "function". It is the child of the span in the
//     call's context (an agent run's, see [Agent], or an MCP client's, see
//     [MetaPropagator]), and the parent of whatever the tool traces: a
//     sub-agent's run nests under its tool's span.
//   - A failed call sets the span's status to Error, with the error text
//     (scrubbed of the call's secrets and capped) as its description, and
//     error.type to a class: the host's ([WithErrorClass]), else
//     [ClassValidation], [ClassUnknownTool], [ClassPanic], [ClassHalt],
//     [ClassDenied] (llmtoolkit.ErrDenied), an
//     ErrorType() string method's value, [ClassTimeout], [ClassCanceled],
//     [ClassDenied] (fs.ErrPermission), or [ClassToolError].
//   - The arguments and the result are attributes only with
//     [WithCaptureContent], redacted exactly as package trace redacts them.
//   - The gen_ai.execute_tool.duration histogram (seconds) gets the call's
//     duration with gen_ai.tool.name, gen_ai.tool.type, error.type on
//     failure, and gen_ai.agent.name inside an [Agent]'s run.
//   - Calls Execute refuses (invalid arguments, a context already done) get
//     their span through the tool's observers, as do recipe calls: the
//     recipe's span starts with its first step's call, and its steps nest
//     under it.
//
// Spans go to the global tracer provider unless [WithTracerProvider] says
// otherwise, and measurements to the global meter provider unless
// [WithMeterProvider] does. While neither has been set, a call costs about
// 20 ns and no allocation more than the wrapped resolver's.
//
// Wrap the top of the stack the model's calls go through (a call a
// [llmtoolkit.Composition] offers in turn to resolvers that do not list its
// tool reaches every wrapped one). Its Tools reads the wrapped list afresh
// each time ([llmtoolkit.ObservedTools]).
func Instrument(r llmtoolkit.Resolver, opts ...Option) *Resolver {
	res := &Resolver{r: r, cfg: newConfig(opts)}
	res.tr = newTracing(res.cfg.tp)
	res.hist = newToolHistogram(res.cfg.mp)
	res.tools = llmtoolkit.NewObservedTools(r, res)
	return res
}

// Tools lists the wrapped resolver's tools as it lists them now, each with
// the Resolver among its observers. The slice is shared: do not modify it.
func (res *Resolver) Tools() []llmtoolkit.Tool { return res.tools.Tools() }

// LookupTool finds a tool of the wrapped resolver as it is now, with the
// Resolver among its observers.
func (res *Resolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	return res.tools.LookupTool(name)
}

// definition is the wrapped resolver's definition of a tool (as the call's
// lookup saw it), and whether it has one.
func (res *Resolver) definition(name string) (llmtoolkit.Tool, bool) {
	return res.tools.Seen(name)
}

// Resolve runs the call on the wrapped resolver in a span of its own (see
// [Instrument]). The tool sees the call unchanged. A panic of the tool ends
// the span as [ClassPanic] and then panics again (Execute rescues it).
func (res *Resolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if res.r == nil {
		return "", fmt.Errorf("%w: %q (otelkit.Instrument was given a nil resolver)", llmtoolkit.ErrUnknownTool, call.Name)
	}
	if content, ok, err := llmtoolkit.ResolveRecipe(ctx, res, call); ok {
		return content, err // a recipe reached by Resolve: a span for it, one per step
	}
	tracing := res.tr.active()
	if !tracing && !res.hist.Enabled(ctx) {
		return res.r.Resolve(ctx, call) // nothing listens: no cost
	}
	return res.resolveTraced(ctx, call, tracing)
}

// resolveTraced resolves a call in its span, and measures it.
func (res *Resolver) resolveTraced(ctx context.Context, call llmtoolkit.Call, tracing bool) (content string, err error) {
	def, known := res.definition(call.Name)
	cs := res.begin(ctx, call, def, time.Now(), tracing)
	var caught func() (llmtoolkit.Tool, bool)
	if !known {
		// A resolver below may know it (a Session's undeclared recipe
		// step): redact by the definition it tells.
		cs.ctx, caught = llmtoolkit.CatchDefinition(cs.ctx, call.Name)
	}
	relearn := func() {
		if caught == nil {
			return
		}
		if t, ok := caught(); ok {
			cs.def = t
		}
	}
	finished := false
	defer func() {
		if finished {
			return
		}
		relearn()
		v := recover()
		if v == nil { // runtime.Goexit: nothing to panic again
			res.end(cs, "", errors.New("the tool did not return (runtime.Goexit)"), "the tool did not return", time.Now())
			return
		}
		pe := &llmtoolkit.PanicError{Value: v}
		res.end(cs, "", pe, pe.Error(), time.Now())
		panic(v)
	}()
	if cs.span != nil {
		cs.parts = &spanParts{}
		cs.ctx = llmtoolkit.WithListeners(cs.ctx, llmtoolkit.Listeners{Parts: cs.parts.add})
	}
	content, err = res.r.Resolve(cs.ctx, call)
	finished = true
	relearn()
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	res.end(cs, content, err, errText, time.Now())
	return content, err
}

// ObserveCall traces a call that [llmtoolkit.Execute] answered without
// resolving it: a call refused before it ran, or a recipe call. It
// implements [llmtoolkit.Observer].
func (res *Resolver) ObserveCall(ctx context.Context, o llmtoolkit.Observation) {
	tracing := res.tr.active()
	if !tracing && !res.hist.Enabled(ctx) {
		return
	}
	now := time.Now()
	var err error
	errText := ""
	if o.Result.IsError {
		err, errText = o.Result.Err, o.Result.Content
		if err == nil {
			err = errors.New(o.Result.Content)
		}
	}
	if o.Kind == llmtoolkit.ObservedRecipe {
		if cs, ok := res.recipes.take(o.RunID); ok { // started with its first step
			cs.call = o.Call
			res.end(cs, o.Result.Content, err, errText, now)
			return
		}
	}
	cs := res.begin(ctx, o.Call, o.Tool, now.Add(-o.Duration), tracing)
	if cs.span != nil && len(o.Result.Parts) > 0 {
		cs.parts = &spanParts{parts: o.Result.Parts}
	}
	res.end(cs, o.Result.Content, err, errText, now)
}

// callSpan is one call being traced.
type callSpan struct {
	ctx   context.Context // the call's, with its span
	span  trace.Span      // nil when not tracing
	call  llmtoolkit.Call
	def   llmtoolkit.Tool
	start time.Time
	parts *spanParts // what the tool attached, when tracing
}

// begin starts a call's span (when tracing), under its recipe's span when
// it is a step of one.
func (res *Resolver) begin(ctx context.Context, call llmtoolkit.Call, def llmtoolkit.Tool, start time.Time, tracing bool) callSpan {
	cs := callSpan{ctx: ctx, call: call, def: def, start: start}
	if !tracing {
		return cs
	}
	ctx = res.stepParent(ctx)
	cs.ctx, cs.span = res.tr.tracer.Start(ctx, spanName(opExecuteTool, call.Name),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithTimestamp(start),
		trace.WithAttributes(res.toolAttributes(call.Name, call.ID, def)...))
	if s := llmtoolkit.ScopeFrom(ctx).Session; s != nil {
		if id, ok := s["conversation_id"].(string); ok && id != "" {
			cs.span.SetAttributes(keyConversationID.String(res.cfg.capText(id)))
		}
		if id, ok := s["tenant_id"].(string); ok && id != "" {
			cs.span.SetAttributes(keyTenantID.String(res.cfg.capText(id)))
		}
	}
	return cs
}

// toolAttributes are the attributes a tool span starts with.
func (res *Resolver) toolAttributes(name, callID string, def llmtoolkit.Tool) []attribute.KeyValue {
	attrs := make([]attribute.KeyValue, 0, 5)
	attrs = append(attrs,
		keyOperationName.String(opExecuteTool),
		keyToolName.String(name),
		keyToolType.String(toolTypeFunction))
	if callID != "" {
		attrs = append(attrs, keyToolCallID.String(callID))
	}
	if def.Description != "" {
		attrs = append(attrs, keyToolDesc.String(res.cfg.capText(def.Description)))
	}
	return attrs
}

// end ends a call's span and measures it. errText is what the model was
// told of err.
func (res *Resolver) end(cs callSpan, content string, err error, errText string, now time.Time) {
	class := ""
	if err != nil {
		class = res.cfg.classifyTool(cs.ctx, err)
	}
	if cs.span != nil {
		res.endSpan(cs, content, err, errText, class, now)
	}
	if res.hist.Enabled(cs.ctx) {
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, keyToolName.String(cs.call.Name), keyToolType.String(toolTypeFunction))
		if class != "" {
			attrs = append(attrs, keyErrorType.String(class))
		}
		if agent := agentName(cs.ctx); agent != "" {
			attrs = append(attrs, keyAgentName.String(agent))
		}
		res.hist.Record(cs.ctx, now.Sub(cs.start).Seconds(), metric.WithAttributes(attrs...))
	}
}

// endSpan sets the outcome of a call on its span and ends it.
func (res *Resolver) endSpan(cs callSpan, content string, err error, errText, class string, now time.Time) {
	var red redacted
	if res.cfg.content || err != nil {
		red = res.cfg.redactCall(cs.call, cs.def)
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	if res.cfg.content {
		attrs = append(attrs, keyToolArguments.String(res.cfg.capText(red.args)))
		if err == nil {
			attrs = append(attrs, keyToolResult.String(res.cfg.scrub(content, red.secrets)))
		}
	}
	if err != nil {
		attrs = append(attrs, keyErrorType.String(class))
		cs.span.SetStatus(codes.Error, res.cfg.scrub(errText, red.secrets))
	}
	attrs = append(attrs, jobAttributes(llmtoolkit.ShownDisplay(cs.ctx))...)
	if len(attrs) > 0 {
		cs.span.SetAttributes(attrs...)
	}
	cs.parts.record(cs.span, now)
	cs.span.End(trace.WithTimestamp(now))
}

// spanName is "OPERATION TARGET", or the operation alone without a target.
func spanName(op, target string) string {
	if target == "" {
		return op
	}
	return op + " " + target
}
