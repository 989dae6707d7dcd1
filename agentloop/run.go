package agentloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
)

// Run drives the conversation until the model answers without tool calls.
//
// Each iteration sends the history and the tools to the model. An answer
// without tool calls ends the loop (unless [Options.Stop] asks to go on):
// Run returns it, with the history
// (messages, then every message the loop added, ending with the final
// assistant message). Otherwise Run executes every call with
// [llmtoolkit.Execute] (concurrently, up to [Options.MaxParallel]), appends
// the assistant message and one tool message per call, in call order, and
// goes again. Calls for unknown tools and calls with invalid arguments go
// back to the model as error results.
//
// On error, Run returns the last response received (zero if none) and the
// history so far, which always pairs each tool call with its tool message,
// so the conversation can be resumed. The errors are [ErrMaxIterations] (the
// last turn's calls were executed), [*CircuitBreakerError], [*HaltedError],
// [*LLMError] (wrapping a [*ModelPanicError] when the SendFunc panicked), an
// error wrapping ctx's error, and [ErrInvalidOptions]. Every tool call's
// context says its iteration ([llmtoolkit.IterationFrom]).
//
// Run does not modify messages. When it finishes it writes one log record
// with the iteration count, the tool call count and the duration. With
// [Options.Tracer], the run and each model call are also traced.
func Run(ctx context.Context, messages []Message, send SendFunc, opts Options) (Response, []Message, error) {
	history := slices.Clone(messages)
	if send == nil {
		return Response{}, history, fmt.Errorf("%w: the SendFunc is nil; pass a function that calls the model", ErrInvalidOptions)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return Response{}, history, err
	}
	l := newLoop(opts, history)
	start := time.Now()
	var endRun func(RunEnd)
	if opts.Tracer != nil {
		ctx, endRun = opts.Tracer.StartRun(ctx)
	}
	resp, err := l.run(ctx, send)
	l.log(ctx, time.Since(start), err)
	if endRun != nil {
		endRun(RunEnd{Response: resp, Iterations: l.iteration, ToolCalls: l.toolCalls, Err: err})
	}
	return resp, l.history, err
}

// loop is the state of one Run.
type loop struct {
	opts      Options
	resolver  llmtoolkit.Resolver
	offered   *offered // nil when Options.Tools is nil
	history   []Message
	breaker   breaker
	iteration int
	toolCalls int
	eventMu   sync.Mutex
}

func newLoop(opts Options, history []Message) *loop {
	l := &loop{opts: opts, resolver: opts.Resolver, history: history, breaker: newBreaker(opts.BreakerThreshold)}
	if opts.Tools != nil {
		l.offered = newOffered(opts.Resolver, opts.Tools)
		l.resolver = l.offered
	}
	return l
}

func (l *loop) run(ctx context.Context, send SendFunc) (Response, error) {
	var last Response
	for l.iteration = 1; l.iteration <= l.opts.MaxIterations; l.iteration++ {
		n := l.iteration
		if err := ctx.Err(); err != nil {
			return last, fmt.Errorf("agentloop: stopped before iteration %d: %w", n, err)
		}
		t0 := time.Now()
		resp, err := l.send(ctx, send, l.offeredTools())
		modelDur := time.Since(t0)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return last, fmt.Errorf("agentloop: stopped in iteration %d: %w (model call: %w)", n, ctxErr, err)
			}
			return last, &LLMError{Iteration: n, Err: err}
		}
		last = resp
		l.emit(Event{Kind: EventResponse, Iteration: n, Response: &resp, Duration: modelDur})
		it := Iteration{N: n, Response: resp, Calls: resp.ToolCalls, ModelDuration: modelDur}
		if len(resp.ToolCalls) == 0 {
			l.history = append(l.history, resp.Message())
			l.iterationDone(it)
			if l.opts.Stop != nil {
				if msg, ok := l.opts.Stop(llmtoolkit.WithIteration(ctx, n), resp); ok {
					l.history = append(l.history, UserMessage(msg))
					continue
				}
			}
			return resp, nil
		}

		calls := make([]llmtoolkit.Call, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			if c.Arguments == nil {
				c.Arguments = map[string]any{}
			}
			calls[i] = c
		}
		t1 := time.Now()
		results, durs := l.dispatch(ctx, n, calls)
		it.Results, it.CallDurations, it.ToolsDuration = results, durs, time.Since(t1)
		l.toolCalls += len(calls)
		answer := resp
		answer.ToolCalls = calls
		l.history = append(l.history, answer.Message())
		for _, res := range results {
			l.history = append(l.history, ToolMessage(res))
		}
		l.iterationDone(it)

		if halt := haltOf(results); halt != nil {
			return resp, halt
		}
		if err := ctx.Err(); err != nil {
			return resp, fmt.Errorf("agentloop: stopped in iteration %d: %w", n, err)
		}
		if err := l.breaker.observe(results); err != nil {
			return resp, err
		}
	}
	l.iteration = l.opts.MaxIterations
	return last, fmt.Errorf("%w: the model still asked for tools after %d iterations; raise Options.MaxIterations or resume with the returned history", ErrMaxIterations, l.opts.MaxIterations)
}

// offeredTools returns the tools offered in this iteration: Options.Tools,
// or the Resolver's list read now (it may change between iterations).
func (l *loop) offeredTools() []llmtoolkit.Tool {
	if l.resolver == nil {
		return nil
	}
	return l.resolver.Tools() // Options.Tools itself when they are set (offered)
}

// send calls the model, turning a panic of the SendFunc into a
// *ModelPanicError (logged with its stack).
func (l *loop) send(ctx context.Context, send SendFunc, tools []llmtoolkit.Tool) (resp Response, err error) {
	if l.opts.Tracer != nil {
		var end func(Response, error)
		ctx, end = l.opts.Tracer.StartModelCall(ctx, l.iteration)
		defer func() { end(resp, err) }() // runs last: after the panic is turned into err
	}
	defer func() {
		if v := recover(); v != nil {
			pe := &ModelPanicError{Value: v, Stack: debug.Stack()}
			l.opts.Logger.ErrorContext(ctx, "agentloop: the SendFunc panicked",
				slog.Int("iteration", l.iteration), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			resp, err = Response{}, pe
		}
	}()
	return send(ctx, slices.Clip(l.history), tools)
}

// dispatch runs one turn's calls and returns their results and durations in
// call order. A halting call cancels the calls still running.
func (l *loop) dispatch(ctx context.Context, n int, calls []llmtoolkit.Call) ([]llmtoolkit.Result, []time.Duration) {
	ctx, cancel := context.WithCancel(llmtoolkit.WithIteration(ctx, n))
	defer cancel()
	results := make([]llmtoolkit.Result, len(calls))
	durs := make([]time.Duration, len(calls))
	one := func(i int) {
		call := calls[i]
		l.emit(Event{Kind: EventToolCall, Iteration: n, Index: i, Call: call})
		t0 := time.Now()
		var res llmtoolkit.Result
		if l.offered != nil && !l.offered.has(call.Name) {
			res = l.offered.notOffered(call)
		} else {
			cctx := ctx
			if l.opts.OnEvent != nil {
				cctx = llmtoolkit.WithShowFunc(ctx, func(d llmtoolkit.Display) {
					l.emit(Event{Kind: EventDisplay, Iteration: n, Index: i, Call: call, Display: &d})
				})
				cctx = llmtoolkit.WithProgressFunc(cctx, func(p llmtoolkit.Progress) {
					l.emit(Event{Kind: EventProgress, Iteration: n, Index: i, Call: call, Progress: &p})
				})
			}
			res = llmtoolkit.Execute(cctx, l.resolver, call)
		}
		durs[i] = time.Since(t0)
		results[i] = res
		l.emit(Event{Kind: EventToolResult, Iteration: n, Index: i, Call: call, Result: &res, Duration: durs[i]})
		if errors.Is(res.Err, llmtoolkit.ErrHalt) {
			cancel()
		}
	}
	if l.opts.MaxParallel == 1 || len(calls) == 1 {
		for i := range calls {
			one(i)
		}
		return results, durs
	}
	sem := make(chan struct{}, l.opts.MaxParallel)
	var wg sync.WaitGroup
	for i := range calls {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			one(i)
		})
	}
	wg.Wait()
	return results, durs
}

// haltOf returns the error for the first result (in call order) whose tool
// called llmtoolkit.Halt, or nil.
func haltOf(results []llmtoolkit.Result) *HaltedError {
	for _, res := range results {
		if !errors.Is(res.Err, llmtoolkit.ErrHalt) {
			continue
		}
		reason := res.Content
		var he *llmtoolkit.HaltError
		if errors.As(res.Err, &he) {
			reason = he.Reason
		}
		return &HaltedError{Tool: res.Name, Reason: reason, Err: res.Err}
	}
	return nil
}

// emit passes e to Options.OnEvent, one event at a time.
func (l *loop) emit(e Event) {
	if l.opts.OnEvent == nil {
		return
	}
	l.eventMu.Lock()
	defer l.eventMu.Unlock()
	l.opts.OnEvent(e)
}

func (l *loop) iterationDone(it Iteration) {
	if l.opts.OnIteration != nil {
		l.opts.OnIteration(it)
	}
}

// log writes the one record of a finished Run.
func (l *loop) log(ctx context.Context, d time.Duration, err error) {
	attrs := []slog.Attr{
		slog.Int("iterations", l.iteration),
		slog.Int("tool_calls", l.toolCalls),
		slog.Duration("duration", d),
	}
	level := slog.LevelInfo
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.opts.Logger.LogAttrs(ctx, level, "agentloop: run finished", attrs...)
}
