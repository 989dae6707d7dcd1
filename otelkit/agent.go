package otelkit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
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
	opHist    metric.Float64Histogram // gen_ai.client.operation.duration
	tokenHist metric.Int64Histogram   // gen_ai.client.token.usage
	costHist  metric.Float64Histogram // llmtoolkit.agent.cost
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
//     dispatch too, and tags their duration with gen_ai.agent.name (not a
//     sub-agent's calls, which carry another [llmtoolkit.Scope].AgentID:
//     give the sub-agent a tracer of its own, agent.SubAgentConfig.Tracer).
//   - The gen_ai.client.operation.duration histogram (seconds) gets each
//     model call's duration (gen_ai.operation.name "chat") and each run's
//     (the agent invocation, "invoke_agent"), with the provider, the model
//     and error.type on failure; gen_ai.client.token.usage gets each model
//     call's reported tokens, by gen_ai.token.type "input" and "output".
//     Both follow the conventions' advised buckets. llmtoolkit.agent.cost
//     (USD, llmtoolkit's own) gets each run's cost (agentloop.RunEnd.Cost,
//     sub-agents included) when a call was priced, with the agent's name,
//     the provider and the model.
//   - With a price table (agentloop.Options.Prices), the run's span gets
//     llmtoolkit.cost.usd and, when a call could not be priced,
//     llmtoolkit.cost.unpriced_calls and llmtoolkit.cost.missing_prices.
//
// gen_ai.provider.name is required by the conventions on both spans and
// both metrics: set it with [WithProviderName]. Unset, it is inferred from
// the provider state of an answer (package provider's codecs: "anthropic",
// "gcp.gemini", "openai") when the answer carries some, and left out
// otherwise.
//
// Messages (prompts, answers) are not recorded. Options other than
// [WithTracerProvider], [WithMeterProvider], [WithProviderName],
// [WithModel] and [WithCaptureContent] (which puts the full error text of a
// circuit breaker or a halt, scrubbed of the declared secrets of the turn's
// calls by agentloop, on the run's status) are ignored.
func Agent(name string, opts ...Option) *AgentTracer {
	a := &AgentTracer{name: name, cfg: newConfig(opts), idle: &runState{agent: name}}
	a.tr = newTracing(a.cfg.tp)
	a.opHist = newHistogram(a.cfg.mp, metricOperationDuration, metricOperationDurationUnit, metricOperationDurationDesc, toolDurationBuckets)
	a.tokenHist = newIntHistogram(a.cfg.mp, metricTokenUsage, metricTokenUsageUnit, metricTokenUsageDesc, tokenUsageBuckets)
	a.costHist = newHistogram(a.cfg.mp, metricRunCost, metricRunCostUnit, metricRunCostDesc, runCostBuckets)
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

var (
	_ agentloop.Tracer        = (*AgentTracer)(nil)
	_ agentloop.ContextTracer = (*AgentTracer)(nil)
)

// ContextChanged adds a span event for a clearing, spill or compaction of
// the run's history (agentloop.ContextPolicy) to the span of ctx: the
// run's span, or for a spill the tool call's when the resolver is wrapped
// with [Instrument]. The event is named "llmtoolkit.context." and the
// change's kind ("context_cleared", "result_spilled",
// "context_compacted") and carries llmtoolkit.context.tokens_before,
// tokens_after, messages, iteration and, for a spill, spill_path (the
// file, relative to the workspace). It implements
// [agentloop.ContextTracer].
func (a *AgentTracer) ContextChanged(ctx context.Context, c agentloop.ContextChange) {
	span := trace.SpanFromContext(ctx)
	if !span.IsRecording() {
		return
	}
	attrs := []attribute.KeyValue{
		keyContextTokensBefore.Int(c.TokensBefore), keyContextTokensAfter.Int(c.TokensAfter),
		keyContextMessages.Int(c.Messages), keyContextIteration.Int(c.Iteration),
	}
	if c.Path != "" {
		attrs = append(attrs, keyContextSpillPath.String(c.Path))
	}
	span.AddEvent(eventContextPrefix+string(c.Kind), trace.WithAttributes(attrs...))
}

// runKey keys the *runState of the run a context belongs to.
type runKey struct{}

// runState is what a run's span gathers from its model calls.
type runState struct {
	agent   string
	agentID string // llmtoolkit.Scope.AgentID of the run's context

	mu       sync.Mutex
	usage    bool // a model call reported its usage
	in, out  int
	provider string // inferred from an answer's provider state
}

// agentName is the name of the agent whose run ctx belongs to, or "": a
// sub-agent's call (another agent id than its run's) is not the run's
// agent's.
func agentName(ctx context.Context) string {
	if s, ok := ctx.Value(runKey{}).(*runState); ok && s.agentID == llmtoolkit.ScopeFrom(ctx).AgentID {
		return s.agent
	}
	return ""
}

var (
	noRunEnd   = func(agentloop.RunEnd) {}
	noModelEnd = func(agentloop.Response, error) {}
)

// StartRun starts the run's invoke_agent span and times the run. It
// implements [agentloop.Tracer].
func (a *AgentTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	tracing := a.tr.active()
	metering := a.opHist.Enabled(ctx)
	if !tracing && !metering {
		if a.name == "" {
			return ctx, noRunEnd
		}
		// The tool duration metric may still want the agent's name.
		if id := llmtoolkit.ScopeFrom(ctx).AgentID; id != "" {
			return context.WithValue(ctx, runKey{}, &runState{agent: a.name, agentID: id}), noRunEnd
		}
		return context.WithValue(ctx, runKey{}, a.idle), noRunEnd
	}
	start := time.Now()
	state := &runState{agent: a.name, agentID: llmtoolkit.ScopeFrom(ctx).AgentID}
	ctx = context.WithValue(ctx, runKey{}, state)
	var span trace.Span
	if tracing {
		ctx, span = a.tr.tracer.Start(ctx, a.runName, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(a.runAttrs...))
	}
	return ctx, func(e agentloop.RunEnd) {
		class := ""
		if e.Err != nil {
			class = classifyRun(e.Err)
		}
		if metering {
			a.recordOperation(ctx, opInvokeAgent, state.providerName(a.cfg.provider), class, time.Since(start))
			a.recordCost(ctx, state.providerName(a.cfg.provider), e.Cost)
		}
		if span == nil {
			return
		}
		if c := e.Cost; c.Calls > 0 || c.Unpriced > 0 {
			span.SetAttributes(keyCostUSD.Float64(c.USD))
			if c.Unpriced > 0 {
				span.SetAttributes(keyCostUnpriced.Int(c.Unpriced), keyCostMissing.StringSlice(c.Missing))
			}
		}
		state.mu.Lock()
		if state.usage {
			span.SetAttributes(keyInputTokens.Int(state.in), keyOutputTokens.Int(state.out))
		}
		provider := state.provider
		state.mu.Unlock()
		if a.cfg.provider == "" && provider != "" {
			span.SetAttributes(keyProviderName.String(provider))
		}
		if e.Response.StopReason != "" {
			span.SetAttributes(keyFinishReasons.StringSlice([]string{e.Response.StopReason}))
		}
		if e.Err != nil {
			span.SetAttributes(keyErrorType.String(class))
			span.SetStatus(codes.Error, a.cfg.capText(a.runErrorText(e.Err)))
		}
		span.End()
	}
}

// providerName is the configured provider name, else the one inferred from
// the run's answers.
func (s *runState) providerName(configured string) string {
	if configured != "" || s == nil {
		return configured
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.provider
}

// inferProvider names the provider whose codec filled an answer's state, as
// the conventions spell it, or "".
func inferProvider(state llmtoolkit.ProviderState) string {
	for _, k := range []struct{ key, name string }{
		{"anthropic", "anthropic"}, {"gemini", "gcp.gemini"}, {"openai-responses", "openai"},
	} {
		if _, ok := state[k.key]; ok {
			return k.name
		}
	}
	return ""
}

// recordOperation measures one chat or invoke_agent operation.
func (a *AgentTracer) recordOperation(ctx context.Context, op, provider, class string, d time.Duration) {
	attrs := make([]attribute.KeyValue, 0, 4)
	attrs = append(attrs, keyOperationName.String(op))
	if provider != "" {
		attrs = append(attrs, keyProviderName.String(provider))
	}
	if a.cfg.model != "" {
		attrs = append(attrs, keyRequestModel.String(a.cfg.model))
	}
	if class != "" {
		attrs = append(attrs, keyErrorType.String(class))
	}
	a.opHist.Record(ctx, d.Seconds(), metric.WithAttributes(attrs...))
}

// recordCost measures what a run cost, when any of its calls was priced.
func (a *AgentTracer) recordCost(ctx context.Context, provider string, c agentloop.Cost) {
	if c.Calls == 0 || !a.costHist.Enabled(ctx) {
		return
	}
	attrs := make([]attribute.KeyValue, 0, 3)
	if a.name != "" {
		attrs = append(attrs, keyAgentName.String(a.name))
	}
	if provider != "" {
		attrs = append(attrs, keyProviderName.String(provider))
	}
	if a.cfg.model != "" {
		attrs = append(attrs, keyRequestModel.String(a.cfg.model))
	}
	a.costHist.Record(ctx, c.USD, metric.WithAttributes(attrs...))
}

// recordTokens measures one chat's reported tokens.
func (a *AgentTracer) recordTokens(ctx context.Context, provider string, u agentloop.Usage) {
	if !a.tokenHist.Enabled(ctx) {
		return
	}
	for _, t := range []struct {
		typ string
		n   int
	}{{tokenTypeInput, u.InputTokens}, {tokenTypeOutput, u.OutputTokens}} {
		attrs := make([]attribute.KeyValue, 0, 4)
		attrs = append(attrs, keyOperationName.String(opChat), keyTokenType.String(t.typ))
		if provider != "" {
			attrs = append(attrs, keyProviderName.String(provider))
		}
		if a.cfg.model != "" {
			attrs = append(attrs, keyRequestModel.String(a.cfg.model))
		}
		a.tokenHist.Record(ctx, int64(t.n), metric.WithAttributes(attrs...))
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

// StartModelCall starts a model call's chat span and times the call. It
// implements [agentloop.Tracer].
func (a *AgentTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	tracing := a.tr.active()
	metering := a.opHist.Enabled(ctx)
	if !tracing && !metering {
		return ctx, noModelEnd
	}
	start := time.Now()
	state, _ := ctx.Value(runKey{}).(*runState)
	if state == a.idle {
		state = nil // the run started while nothing listened: it has nothing to sum for
	}
	var span trace.Span
	if tracing {
		ctx, span = a.tr.tracer.Start(ctx, a.chatName, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(a.chatAttrs...))
	}
	return ctx, func(resp agentloop.Response, err error) {
		provider := a.cfg.provider
		if provider == "" {
			if provider = inferProvider(resp.Provider); provider != "" && state != nil {
				state.mu.Lock()
				state.provider = provider
				state.mu.Unlock()
			}
		}
		class := ""
		if err != nil {
			class = classifyModel(err)
		}
		if metering {
			a.recordOperation(ctx, opChat, provider, class, time.Since(start))
			if u := resp.Usage; err == nil && (u.InputTokens != 0 || u.OutputTokens != 0) {
				a.recordTokens(ctx, provider, u)
			}
		}
		if err == nil && state != nil {
			if u := resp.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
				state.mu.Lock()
				state.usage = true
				state.in += u.InputTokens
				state.out += u.OutputTokens
				state.mu.Unlock()
			}
		}
		if span == nil {
			return
		}
		if a.cfg.provider == "" && provider != "" {
			span.SetAttributes(keyProviderName.String(provider))
		}
		if err != nil {
			span.SetAttributes(keyErrorType.String(class))
			span.SetStatus(codes.Error, a.cfg.capText(err.Error()))
			span.End()
			return
		}
		if u := resp.Usage; u.InputTokens != 0 || u.OutputTokens != 0 {
			span.SetAttributes(keyInputTokens.Int(u.InputTokens), keyOutputTokens.Int(u.OutputTokens))
		}
		if resp.StopReason != "" {
			span.SetAttributes(keyFinishReasons.StringSlice([]string{resp.StopReason}))
		}
		span.End()
	}
}
