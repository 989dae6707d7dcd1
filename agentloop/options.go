package agentloop

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
)

// Defaults applied to zero [Options] fields.
const (
	DefaultMaxIterations    = 10
	DefaultMaxParallel      = 8
	DefaultBreakerThreshold = 3
	// DefaultMaxToolCalls is how many calls of one turn run by default.
	DefaultMaxToolCalls = 128
	// DefaultMaxTurnResultBytes is how many bytes of one turn's tool
	// results are kept by default.
	DefaultMaxTurnResultBytes = 4 << 20
)

// Options configure [Run]. The zero value is usable: no tools, at most 10
// iterations, up to 8 calls of one turn at once and 128 in all, 4 MiB of
// results kept per turn, a circuit breaker at 3 identical failures in a
// row, and the completion logged to slog.Default().
type Options struct {
	// Resolver runs the tool calls, usually the [*llmtoolkit.Session] that
	// [llmtoolkit.PrepareSession] returns. Its definitions are what
	// arguments are validated against and carry the per-tool facts
	// (recipes, sensitive fields, observers). A [llmtoolkit.ResolverFunc]
	// lists no tools: pair it with Tools. Nil: every call goes back to the
	// model as an unknown tool.
	Resolver llmtoolkit.Resolver
	// Tools are the tools offered to the model each turn. Nil means the
	// Resolver's, read again before every model call, so a resolver whose
	// list changes during the run (package agent's permission guard, when a
	// plan is approved) offers its new list from the next iteration. When
	// set, calls for tools not in the list are answered as
	// unknown tools; arguments are validated against the Resolver's
	// definition of a tool, or this one where the Resolver lists none.
	Tools []llmtoolkit.Tool
	// MaxIterations bounds the number of model calls. 0 means
	// [DefaultMaxIterations].
	MaxIterations int
	// MaxParallel bounds how many calls of one turn run at once. 0 means
	// [DefaultMaxParallel]; 1 runs them one after the other. Results are
	// always sent back in call order.
	MaxParallel int
	// MaxToolCalls bounds the calls of one turn that run: the model's
	// answer may ask for more, and each call past the first MaxToolCalls is
	// answered, without running, with an error result the model reads
	// (its Err wraps [ErrTooManyCalls]), so that every call still has its
	// tool message. 0 means [DefaultMaxToolCalls].
	MaxToolCalls int
	// MaxTurnResultBytes bounds the bytes of tool result content one turn
	// keeps in the history (what the model is sent next). Each result is
	// cut to it as soon as its call ends, then, in call order, results
	// past the turn's total are cut to what is left (at least a short
	// head); a cut result ends with a line saying how many bytes were cut
	// and why. 0 means [DefaultMaxTurnResultBytes]. With MaxToolCalls, it
	// bounds the memory one turn holds: at most MaxToolCalls ×
	// MaxTurnResultBytes while the calls run, MaxTurnResultBytes after.
	// A result's parts ([llmtoolkit.Result.Parts]) count with their bytes
	// (an image's own bytes, not their base64): a part that does not fit
	// is dropped whole, never cut, and a line of the content says so. The
	// default is below codetools' read_file cap for media (5 MiB): raise
	// it to let the largest images through.
	MaxTurnResultBytes int
	// BreakerThreshold is how many times in a row the same tool may fail
	// with the same error before Run stops with a [*CircuitBreakerError].
	// 0 means [DefaultBreakerThreshold]; a negative value disables the
	// breaker.
	BreakerThreshold int
	// OnIteration, when set, is called after each iteration with its calls,
	// results and timings, from the goroutine that called Run.
	OnIteration func(Iteration)
	// OnEvent, when set, receives each tool call, Display payload and result
	// as it happens, and each model response. Calls are serialised (never
	// concurrent) even when tools run in parallel; for one call, its
	// EventToolCall comes first and its EventToolResult last. Keep it fast:
	// tools wait for it. A panic in it (or in OnIteration, or Stop) ends the
	// run with a [*CallbackPanicError], never the host.
	OnEvent func(Event)
	// Stop, when set, is called when the model answers without tool calls,
	// with a context carrying the iteration ([llmtoolkit.Scope].Iteration).
	// Returning ok asks the loop to go on: the answer is kept in the
	// history, followed by a user message with the returned text, and the
	// next iteration starts (still bounded by MaxIterations). Returning
	// false ends the run with the answer, as without Stop. Package agent's
	// Stop hooks plug in here.
	Stop func(ctx context.Context, resp Response) (message string, ok bool)
	// Logger receives the one record Run writes when it finishes: at Debug
	// level when the run ends well (so the default logger prints nothing),
	// at Warn with the error otherwise. Nil means slog.Default().
	Logger *slog.Logger
	// Tracer, when set, is told of the run and of each model call, and puts
	// its spans on their contexts (see [Tracer]; package otelkit provides
	// one for OpenTelemetry). Nil: no tracing, at no cost.
	Tracer Tracer
	// Executor, when set, runs each model call and each turn's tool calls
	// (see [Executor]): a durable-execution engine records their outcomes
	// there, so that a run resumed after a crash replays them instead of
	// calling the model and the tools again. Nil: every step runs
	// in-process, at no cost.
	Executor Executor
	// Now, when set, is the clock the loop reads for the durations it
	// reports (Iteration, Event, its log record): a workflow engine whose
	// code must be deterministic (Temporal) passes its own (workflow.Now),
	// so that the durations replay the same. Nil means time.Now. A panic
	// in it ends the run with a [*CallbackPanicError].
	Now func() time.Time
	// ContextBudget is the most tokens a request may take (the history
	// and the tools, as the loop counts them: see [BytesPerToken]), and
	// ContextPolicy says how the loop keeps the history under it:
	// clearing old tool results, compacting, spilling big results to
	// files. 0 (the default): no budget, the history grows as the run
	// goes, exactly as without these fields.
	ContextBudget int
	// Prices is the host's price table: each model call is priced by the
	// model its answer names ([Response.Model], else Model), or by the
	// provider's own figure when the answer has one ([Usage.CostUSD]);
	// see [Prices.Cost]. The run's cost, its sub-agents' included, is in
	// [RunEnd.Cost], each call's in [Iteration.Cost], and both go to
	// Meter when it is set. A call it cannot price is counted in
	// [Cost.Unpriced] and named in [Cost.Missing] (and logged at Warn),
	// never taken as free. Nil: the price table of the run this one is a
	// sub-agent of (through the tool call's context), else none (every
	// call is unpriced, unless the provider reports its cost).
	Prices Prices
	// Model names the model for pricing when an answer names none
	// (package provider's parsers set [Response.Model]).
	Model string
	// MaxCostUSD, when positive, is the run's money budget, in US
	// dollars, its sub-agents' spending included: before each model call
	// the loop estimates the call's cost and, when what was spent plus
	// the estimate would pass the budget, ends the run without making it,
	// with a [*CostBudgetError] (wrapping [ErrCostBudget]); the history
	// returned is paired. The estimate is the request's prompt as the
	// loop counts it (the provider's count of the last request plus the
	// estimate of what was added since, see [BytesPerToken]) at the
	// model's Input price, as if nothing were cached (an upper bound on
	// the prompt's cost), plus the most output tokens one answer of this
	// run had so far (0 before the first) at the Output (or higher
	// Reasoning) price; the model is the last answer's, else Model; a
	// model with no price is estimated at 0 (the check is then what was
	// spent). A call's estimate is set aside while it is in flight, so
	// parallel sub-agents under one budget cannot pass it together by
	// more than the estimates' error. A sub-agent's run checks its own
	// budget and every budget of the runs it is nested in. With a budget,
	// a call that could not be priced ends the run before the next call,
	// with an error wrapping [ErrNoPrice]. The output of a single call
	// can still pass the estimate: bound it with the provider's max
	// tokens.
	MaxCostUSD float64
	// Meter, when set, sums the run's cost, its sub-agents' included, as
	// the calls are priced: a host passes the same Meter to every turn
	// of a conversation.
	Meter *Meter
	// ContextPolicy is how the history is kept under ContextBudget, and
	// when big results are spilled to files; its zero value uses the
	// defaults it documents (see [ContextPolicy]).
	ContextPolicy ContextPolicy
}

// Iteration describes one round of the loop: a model call and the tool
// calls it asked for.
type Iteration struct {
	// N is the 1-based iteration number.
	N int
	// Response is the model's answer.
	Response Response
	// Calls are the tool calls of the answer, in order.
	Calls []llmtoolkit.Call
	// Results are their results, in the same order.
	Results []llmtoolkit.Result
	// CallDurations are the tool calls' durations, in the same order.
	CallDurations []time.Duration
	// ModelDuration is how long the model call took.
	ModelDuration time.Duration
	// ToolsDuration is how long the tool calls took together (wall clock).
	ToolsDuration time.Duration
	// Cost is what this iteration's model call cost ([Options.Prices]):
	// Calls 1, or Unpriced 1 with what was missing.
	Cost Cost
	// ContextTokens is the size, in tokens, of the request of this
	// iteration's model call as the loop counted it (see
	// [BytesPerToken]), when [Options.ContextBudget] is set; else 0.
	ContextTokens int
}

// EventKind names what an [Event] reports.
type EventKind string

// The kinds of [Event].
const (
	// EventResponse: the model answered (Event.Response).
	EventResponse EventKind = "response"
	// EventToolCall: a tool call starts (Event.Call).
	EventToolCall EventKind = "tool_call"
	// EventDisplay: a running tool showed a payload (Event.Call, Event.Display).
	EventDisplay EventKind = "display"
	// EventProgress: a running tool reported its progress with
	// llmtoolkit.ReportProgress (Event.Call, Event.Progress).
	EventProgress EventKind = "progress"
	// EventToolResult: a tool call finished (Event.Call, Event.Result).
	EventToolResult EventKind = "tool_result"
	// EventContextCleared: old tool results were cleared (Event.Context).
	EventContextCleared EventKind = "context_cleared"
	// EventResultSpilled: a tool result was spilled to a file
	// (Event.Call, Event.Context).
	EventResultSpilled EventKind = "result_spilled"
	// EventContextCompacted: the oldest span of the history was replaced
	// by its summary (Event.Context).
	EventContextCompacted EventKind = "context_compacted"
)

// Event is something that happened during [Run], for a host's UI.
type Event struct {
	// Kind says what happened and which fields are set.
	Kind EventKind
	// Iteration is the 1-based iteration number.
	Iteration int
	// Index is the call's position in its turn (tool events).
	Index int
	// Call is the tool call (tool events).
	Call llmtoolkit.Call
	// Result is the call's result (EventToolResult).
	Result *llmtoolkit.Result
	// Display is the payload the tool showed (EventDisplay).
	Display *llmtoolkit.Display
	// Progress is the progress the tool reported (EventProgress).
	Progress *llmtoolkit.Progress
	// Response is the model's answer (EventResponse).
	Response *Response
	// Duration is how long the call took (EventToolResult) or the model
	// call took (EventResponse).
	Duration time.Duration
	// Context describes a clearing, a spill or a compaction
	// (EventContextCleared, EventResultSpilled, EventContextCompacted).
	Context *ContextChange
}

// withDefaults checks o and fills in the defaults.
func (o Options) withDefaults() (Options, error) {
	switch {
	case o.MaxIterations < 0:
		return o, fmt.Errorf("%w: MaxIterations is %d; use a positive number, or 0 for the default (%d)", ErrInvalidOptions, o.MaxIterations, DefaultMaxIterations)
	case o.MaxToolCalls < 0:
		return o, fmt.Errorf("%w: MaxToolCalls is %d; use a positive number, or 0 for the default (%d)", ErrInvalidOptions, o.MaxToolCalls, DefaultMaxToolCalls)
	case o.MaxTurnResultBytes < 0:
		return o, fmt.Errorf("%w: MaxTurnResultBytes is %d; use a positive number, or 0 for the default (%d)", ErrInvalidOptions, o.MaxTurnResultBytes, DefaultMaxTurnResultBytes)
	case !(o.MaxCostUSD >= 0) || o.MaxCostUSD > 1e15:
		return o, fmt.Errorf("%w: MaxCostUSD is %v; use a positive number of US dollars, or 0 for no money budget", ErrInvalidOptions, o.MaxCostUSD)
	case o.MaxParallel < 0:
		return o, fmt.Errorf("%w: MaxParallel is %d; use a positive number, 1 for one call at a time, or 0 for the default (%d)", ErrInvalidOptions, o.MaxParallel, DefaultMaxParallel)
	}
	if o.MaxIterations == 0 {
		o.MaxIterations = DefaultMaxIterations
	}
	if o.MaxParallel == 0 {
		o.MaxParallel = DefaultMaxParallel
	}
	if o.MaxToolCalls == 0 {
		o.MaxToolCalls = DefaultMaxToolCalls
	}
	if o.MaxTurnResultBytes == 0 {
		o.MaxTurnResultBytes = DefaultMaxTurnResultBytes
	}
	if o.BreakerThreshold == 0 {
		o.BreakerThreshold = DefaultBreakerThreshold
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	o, err := o.withPolicyDefaults()
	if err != nil {
		return o, err
	}
	if rf, ok := o.Resolver.(llmtoolkit.ResolverFunc); ok && rf == nil {
		o.Resolver = nil // PrepareSession returns (nil, nil) when nothing matches
	}
	return o, nil
}
