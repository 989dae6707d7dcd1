package otelkit

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// AgentTracer traces [agentloop.Run] with OpenTelemetry: it implements
// [agentloop.Tracer]. Build it with [Agent] and set it as
// [agentloop.Options.Tracer]. It is safe for concurrent use by many runs.
type AgentTracer struct {
	name      string
	idle      *runState // the state of every run while nothing listens
	cfg       config
	tr        tracing
	runName   string
	chatName  string
	runAttrs  []attribute.KeyValue
	chatAttrs []attribute.KeyValue
}

// Agent returns the tracer of the runs of an agent called name, following
// the OpenTelemetry GenAI conventions (version [SemConvVersion]):
//
//   - Each run is a span named "invoke_agent NAME" ("invoke_agent" when
//     name is empty), of kind INTERNAL, with gen_ai.operation.name
//     "invoke_agent", gen_ai.agent.name, gen_ai.provider.name and
//     gen_ai.request.model (see [WithProviderName], [WithModel]); when it
//     ends, gen_ai.usage.input_tokens and gen_ai.usage.output_tokens summed
//     over its model calls and gen_ai.response.finish_reasons of the last
//     answer. A run that ends in error has status Error and error.type
//     [ClassMaxIterations], [ClassCircuitBreaker], [ClassHalted],
//     [ClassModelError], [ClassTimeout] or [ClassCanceled].
//   - Each model call (SendFunc) is a child span named "chat MODEL" (or
//     "chat"), of kind CLIENT, with gen_ai.operation.name "chat", the
//     provider and model, and the call's gen_ai.usage.input_tokens,
//     gen_ai.usage.output_tokens (from Response.Usage, when reported) and
//     gen_ai.response.finish_reasons (from Response.StopReason, as the
//     provider gave it). A failed call has status Error and error.type
//     [ClassPanic], [ClassTimeout], [ClassCanceled], or the error's type.
//   - Tool calls are made with the run's context: a Resolver wrapped with
//     [Instrument] makes their spans children of the run's, in parallel
//     dispatch too, and tags their duration with gen_ai.agent.name.
//
// Messages (prompts, answers) are not recorded. Options other than
// [WithTracerProvider], [WithProviderName], [WithModel] and
// [CaptureContent] (which puts the full error text of a circuit breaker or
// a halt on the run's status) are ignored.
func Agent(name string, opts ...Option) *AgentTracer {
	a := &AgentTracer{name: name, cfg: newConfig(opts), idle: &runState{agent: name}}
	a.tr = newTracing(a.cfg.tp)
	a.runName = spanName(opInvokeAgent, name)
	a.chatName = spanName(opChat, a.cfg.model)
	common := func(op string) []attribute.KeyValue {
		attrs := []attribute.KeyValue{keyOperationName.String(op)}
		if a.cfg.provider != "" {
			attrs = append(attrs, keyProviderName.String(a.cfg.provider))
		}
		if a.cfg.model != "" {
			attrs = append(attrs, keyRequestModel.String(a.cfg.model))
		}
		return attrs
	}
	a.runAttrs = common(opInvokeAgent)
	if name != "" {
		a.runAttrs = append(a.runAttrs, keyAgentName.String(name))
	}
	a.chatAttrs = common(opChat)
	return a
}

var _ agentloop.Tracer = (*AgentTracer)(nil)

// runKey keys the *runState of the run a context belongs to.
type runKey struct{}

// runState is what a run's span gathers from its model calls.
type runState struct {
	agent string

	mu      sync.Mutex
	usage   bool // a model call reported its usage
	in, out int
}

// agentName is the name of the agent whose run ctx belongs to, or "".
func agentName(ctx context.Context) string {
	if s, ok := ctx.Value(runKey{}).(*runState); ok {
		return s.agent
	}
	return ""
}

var (
	noRunEnd   = func(agentloop.RunEnd) {}
	noModelEnd = func(agentloop.Response, error) {}
)

// StartRun starts the run's invoke_agent span. It implements
// [agentloop.Tracer].
func (a *AgentTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	if !a.tr.active() {
		if a.name == "" {
			return ctx, noRunEnd
		}
		// The tool duration metric may still want the agent's name.
		return context.WithValue(ctx, runKey{}, a.idle), noRunEnd
	}
	state := &runState{agent: a.name}
	ctx = context.WithValue(ctx, runKey{}, state)
	ctx, span := a.tr.tracer.Start(ctx, a.runName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(a.runAttrs...))
	return ctx, func(e agentloop.RunEnd) {
		state.mu.Lock()
		if state.usage {
			span.SetAttributes(keyInputTokens.Int(state.in), keyOutputTokens.Int(state.out))
		}
		state.mu.Unlock()
		if e.Response.StopReason != "" {
			span.SetAttributes(keyFinishReasons.StringSlice([]string{e.Response.StopReason}))
		}
		if e.Err != nil {
			span.SetAttributes(keyErrorType.String(classifyRun(e.Err)))
			span.SetStatus(codes.Error, a.cfg.capText(a.runErrorText(e.Err)))
		}
		span.End()
	}
}

// runErrorText is the status description of a run that failed with err.
// The errors that quote a tool's result (a circuit breaker's, a halt's) are
// described without it unless content is captured: the run does not know
// which of the tool's arguments are secret.
func (a *AgentTracer) runErrorText(err error) string {
	if a.cfg.content {
		return err.Error()
	}
	var cb *agentloop.CircuitBreakerError
	var he *agentloop.HaltedError
	switch {
	case errors.As(err, &cb):
		return fmt.Sprintf("agentloop: circuit breaker tripped: tool %q failed %d times in a row with the same error", cb.Tool, cb.Count)
	case errors.As(err, &he):
		return fmt.Sprintf("agentloop: halted by tool %q", he.Tool)
	}
	return err.Error()
}

// StartModelCall starts a model call's chat span. It implements
// [agentloop.Tracer].
func (a *AgentTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	if !a.tr.active() {
		return ctx, noModelEnd
	}
	state, _ := ctx.Value(runKey{}).(*runState)
	if state == a.idle {
		state = nil // the run started while nothing listened: it has no span to sum for
	}
	ctx, span := a.tr.tracer.Start(ctx, a.chatName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(a.chatAttrs...))
	return ctx, func(resp agentloop.Response, err error) {
		if err != nil {
			span.SetAttributes(keyErrorType.String(classifyModel(err)))
			span.SetStatus(codes.Error, a.cfg.capText(err.Error()))
			span.End()
			return
		}
		if u := resp.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
			span.SetAttributes(keyInputTokens.Int(u.InputTokens), keyOutputTokens.Int(u.OutputTokens))
			if state != nil {
				state.mu.Lock()
				state.usage = true
				state.in += u.InputTokens
				state.out += u.OutputTokens
				state.mu.Unlock()
			}
		}
		if resp.StopReason != "" {
			span.SetAttributes(keyFinishReasons.StringSlice([]string{resp.StopReason}))
		}
		span.End()
	}
}
