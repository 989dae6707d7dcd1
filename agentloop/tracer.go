package agentloop

import "context"

// Tracer follows a [Run] for an observability backend: it is told when the
// run and each model call start and end, and the contexts it returns carry
// its spans to what runs inside them. Package otelkit implements it with
// OpenTelemetry's GenAI conventions (an invoke_agent span around the run, a
// chat span around each model call); agentloop itself depends on no
// telemetry library, so hosts that want none never import one.
//
// Tool calls are not reported here: they run with contexts derived from
// the one StartRun returns, so a resolver wrapper that traces calls (such
// as otelkit's) nests their spans under the run, in parallel dispatch too.
//
// Its methods are called from the goroutine that called Run, never
// concurrently for one run. They must not block for long and must not
// panic: like [Options.OnEvent], a panic in them is not rescued.
type Tracer interface {
	// StartRun is called once, when Run starts. The context it returns is
	// the run's: every model call and tool call is made with a context
	// derived from it. end is called once, when Run returns, with what it
	// returns.
	StartRun(ctx context.Context) (runCtx context.Context, end func(RunEnd))
	// StartModelCall is called before each call of the SendFunc, with the
	// 1-based iteration. The context it returns is the one the SendFunc
	// gets. end is called once the SendFunc returned (or panicked: the
	// error is then a [*ModelPanicError]).
	StartModelCall(ctx context.Context, iteration int) (callCtx context.Context, end func(Response, error))
}

// RunEnd is what a [Tracer] is told when a [Run] ends.
type RunEnd struct {
	// Response is the last response received (zero if none), as Run
	// returns it.
	Response Response
	// Iterations is the iteration Run ended in, as its log record counts
	// it.
	Iterations int
	// ToolCalls is the number of tool calls executed.
	ToolCalls int
	// Cost is what the run's model calls cost, its sub-agents' included
	// (see [Options.Prices]).
	Cost Cost
	// Err is the error Run returns, or nil.
	Err error
}
