package agentloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
)

// Executor runs the steps of a [Run]: each model call and each turn's tool
// calls. A durable-execution engine (DBOS, Temporal) implements it to
// record each step's outcome and, when an interrupted run is resumed, to
// return the recorded outcome instead of running the step again. Nil
// ([Options.Executor] unset) runs every step in-process, exactly as
// before, at the same speed.
//
// What a durable engine guarantees through it: a step that completed (its
// outcome recorded) runs exactly once, however often the run is resumed;
// the step that was interrupted (the process died while it ran) runs at
// least once: again when the run resumes. A tool with side effects must
// therefore be idempotent, and its key for that is the call ID
// ([llmtoolkit.Call.ID], in the Call the resolver receives) with the run
// and the iteration: [llmtoolkit.IdempotencyKey] of the call's context and
// the call. The same call of the same run has the same ID on every
// attempt, since the model's answer that holds it is itself a recorded
// step; the engine puts the run's identity on the context Run gets with
// [llmtoolkit.Scope].RunID. A tool that sends an email, say, records the
// keys it has sent and skips one it has seen.
//
// To store outcomes, encode them with [EncodeModel] and [EncodeResult]:
// [ModelOutcome] and [ToolOutcome] survive JSON (and gob) with their
// meaning, errors included (see [ErrorOutcome]).
//
// An error returned by Model or Tools that is not the model's (the engine
// failed, say its database is gone) ends the run with an [*ExecutorError].
// Model must return call's error as it is, or the error that
// [ModelOutcome.Unpack] restores: any other error is taken for the
// engine's (the model's error wrapped by the engine counts as the
// model's).
//
// Callbacks run where Run runs. On replay, OnIteration, Stop and the
// EventResponse events are seen again; a step whose outcome is replayed
// does not run, so its tool events and its Tracer model-call span are not
// emitted again.
type Executor interface {
	// Model performs the model call of step.Iteration. call does it
	// in-process (the SendFunc, with the loop's panic rescue and tracing);
	// an engine calls it inside a recorded step, or returns the outcome
	// recorded by an earlier attempt.
	Model(ctx context.Context, step ModelStep, call func(context.Context) (Response, error)) (Response, error)
	// Tools performs the tool calls of one turn and returns one result per
	// call, in call order. run(ctx, i) performs call i in-process exactly as
	// the loop would (the MaxToolCalls answer, the offered-tools check,
	// llmtoolkit.Execute with the iteration and the events, the per-call
	// cap) and never panics; it may be called concurrently for different
	// i, and must not be called once Tools has returned. An engine runs
	// each run(ctx, i) as its own recorded step keyed by (step.Iteration,
	// i, step.Calls[i].ID), so that parallel calls replay
	// deterministically, and may run them concurrently up to
	// step.MaxParallel. The loop applies the turn's byte budget, the halt
	// check and the circuit breaker to what Tools returns. A run elsewhere
	// (an activity on a worker) calls [RunToolCall] instead of run.
	//
	// When Tools returns an error, the results it returned for the turn's
	// calls (one per call, each answering its call's ID) are kept, and the
	// other calls are answered with an error result wrapping the
	// [*ExecutorError] the run ends with, so the history stays paired.
	Tools(ctx context.Context, step ToolsStep, run func(ctx context.Context, i int) llmtoolkit.Result) ([]llmtoolkit.Result, error)
}

// ModelStep describes one model call.
type ModelStep struct {
	// Iteration is the 1-based iteration of the call.
	Iteration int
	// Messages is the history sent. Do not modify it.
	Messages []Message
	// Tools are the tools offered.
	Tools []llmtoolkit.Tool
	// Compaction marks the step that summarizes a span of the history
	// ([ContextPolicy.Summarize]): Messages is the span followed by a user
	// message asking for a summary ([SummaryPrompt]), Tools is nil, and
	// call runs the host's summarizer. An engine records it like any
	// model step (it may name it apart); one that calls the model itself
	// instead of call gets a summary written by the model.
	Compaction bool
}

// ToolsStep describes one turn's tool calls.
type ToolsStep struct {
	// Iteration is the 1-based iteration of the turn.
	Iteration int
	// Calls are the turn's calls, in order; their IDs are distinct
	// (provider parsers guarantee it) and are the keys of their steps.
	// Do not modify them.
	Calls []llmtoolkit.Call
	// MaxParallel is how many calls may run at once ([Options.MaxParallel]
	// with its default).
	MaxParallel int
}

// sendVia performs the model call through Options.Executor.
func (l *loop) sendVia(ctx context.Context, send SendFunc, tools []llmtoolkit.Tool) (Response, error) {
	var called bool
	var callErr error
	call := func(ctx context.Context) (Response, error) {
		resp, err := l.send(ctx, send, tools)
		called, callErr = true, err
		return resp, err
	}
	step := ModelStep{Iteration: l.iteration, Messages: slices.Clip(l.history), Tools: tools}
	resp, err := l.opts.Executor.Model(ctx, step, call)
	if err == nil || isModelError(err, called, callErr) {
		return resp, err
	}
	return Response{}, &ExecutorError{Step: StepModel, Iteration: l.iteration, Err: err}
}

// isModelError reports whether err, returned by Executor.Model, is the
// model's: call's own error, or a recorded one that is not the engine's.
func isModelError(err error, called bool, callErr error) bool {
	if called && callErr != nil && errors.Is(err, callErr) { // errors.Is: no == on an uncomparable error
		return true
	}
	var re *RecordedError
	return errors.As(err, &re) && !errors.Is(err, ErrExecutor)
}

// dispatchVia runs one turn's calls through Options.Executor. ctx carries
// the iteration; cancel cancels the turn (a halting call).
func (l *loop) dispatchVia(ctx context.Context, cancel context.CancelFunc, n int, calls []llmtoolkit.Call, durs []time.Duration) ([]llmtoolkit.Result, error) {
	run := func(rctx context.Context, i int) llmtoolkit.Result {
		if i < 0 || i >= len(calls) {
			return badIndex(calls, i)
		}
		if ok := llmtoolkit.ScopeFrom(rctx).Iteration > 0; !ok {
			rctx = llmtoolkit.WithScope(rctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(n) })
		}
		res, d := l.runCall(rctx, n, calls, i)
		durs[i] = d
		if errors.Is(res.Err, llmtoolkit.ErrHalt) {
			cancel()
		}
		return res
	}
	step := ToolsStep{Iteration: n, Calls: calls, MaxParallel: l.opts.MaxParallel}
	got, err := l.opts.Executor.Tools(ctx, step, run)
	if err == nil && len(got) != len(calls) {
		err = fmt.Errorf("Executor.Tools returned %d results for %d calls; return one result per call, in call order", len(got), len(calls))
	}
	if err == nil {
		for i, res := range got {
			if res.ToolCallID != calls[i].ID {
				err = fmt.Errorf("Executor.Tools returned, as result %d, the result of call %q, not of call %q; return one result per call, in call order", i, res.ToolCallID, calls[i].ID)
				break
			}
		}
	}
	if err == nil {
		return got, nil
	}
	ee := &ExecutorError{Step: StepTools, Iteration: n, Err: err}
	results := make([]llmtoolkit.Result, len(calls))
	for i, call := range calls {
		if len(got) == len(calls) && answers(got[i], call) {
			results[i] = got[i]
			continue
		}
		results[i] = llmtoolkit.Result{
			ToolCallID: call.ID, Name: call.Name, IsError: true, Err: ee,
			Content: fmt.Sprintf("tool %q: the call's outcome is unknown: %v", call.Name, ee),
		}
	}
	return results, ee
}

// answers reports whether res is a result for call (not a zero Result).
func answers(res llmtoolkit.Result, call llmtoolkit.Call) bool {
	return res.ToolCallID == call.ID && res.Name == call.Name &&
		(res.Content != "" || res.IsError || res.Display != nil || res.Err != nil || len(res.Parts) > 0)
}

// badIndex is the answer to run(ctx, i) with an i out of range.
func badIndex(calls []llmtoolkit.Call, i int) llmtoolkit.Result {
	err := fmt.Errorf("%w: run was called for call %d of a turn of %d calls; call it with 0 <= i < len(step.Calls)", ErrExecutor, i, len(calls))
	return llmtoolkit.Result{Name: "", Content: err.Error(), IsError: true, Err: err}
}

// RunToolCall performs call i of calls, the tool calls of iteration
// (1-based), exactly as [Run] does it in-process and as the run function
// given to [Executor.Tools] does: it answers a call past
// [Options.MaxToolCalls] without running it, answers a call for a tool not
// in [Options.Tools] as an unknown tool, or runs it with
// [llmtoolkit.Execute] on [Options.Resolver] (with the iteration on its
// context and the events to [Options.OnEvent]) and cuts its content to
// [Options.MaxTurnResultBytes]. It is for engines whose steps run in
// another process (a Temporal activity on a worker): call it there with
// the run's Options, and return [EncodeResult] of its result to the
// workflow. It never panics: unusable Options or an i out of range give an
// error result (wrapping [ErrInvalidOptions] or [ErrExecutor]); a panic of
// OnEvent is logged, as there is no run here for it to end.
//
// The turn's byte budget, the halt check and the circuit breaker are
// applied by the Run that receives the results.
func RunToolCall(ctx context.Context, opts Options, iteration int, calls []llmtoolkit.Call, i int) llmtoolkit.Result {
	if i < 0 || i >= len(calls) {
		return badIndex(calls, i)
	}
	// A tool call neither counts nor compacts the history: the worker's
	// Options may hold a summarizer for its model steps without a budget.
	opts.ContextBudget, opts.ContextPolicy.Summarize = 0, nil
	opts, err := opts.withDefaults()
	if err != nil {
		c := calls[i]
		return llmtoolkit.Result{ToolCallID: c.ID, Name: c.Name, Content: err.Error(), IsError: true, Err: err}
	}
	l := newLoop(opts, nil)
	if c := calls[i]; c.Arguments == nil {
		calls = slices.Clone(calls)
		calls[i].Arguments = map[string]any{}
	}
	l.learnSecrets(calls) // what the worker writes (a spill file) is scrubbed of them
	res, _ := l.runCall(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(iteration) }), iteration, calls, i)
	return res
}
