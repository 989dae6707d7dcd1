package agentloop

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
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
// back to the model as error results, as do the calls of a turn past
// [Options.MaxToolCalls] (not run); results past
// [Options.MaxTurnResultBytes] are cut, with a note.
//
// On error, Run returns the last response received (zero if none) and the
// history so far, which always pairs each tool call with its tool message,
// so the conversation can be resumed. The errors are [ErrMaxIterations] (the
// last turn's calls were executed), [*CircuitBreakerError], [*HaltedError],
// [*LLMError] (wrapping a [*ModelPanicError] when the SendFunc panicked),
// [*CallbackPanicError] (OnEvent, OnIteration or Stop panicked),
// [*ExecutorError] (the [Options.Executor] failed), an error wrapping
// ctx's error, and [ErrInvalidOptions]. Every tool call's
// context says its iteration ([llmtoolkit.Scope].Iteration).
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
	start := l.now()
	var endRun func(RunEnd)
	if opts.Tracer != nil {
		ctx, endRun = opts.Tracer.StartRun(ctx)
	}
	ctx = l.initCosts(ctx)
	resp, err := l.run(ctx, send)
	l.removeSpills(ctx)
	err = l.scrubRunError(err) // before it is logged, traced or returned
	l.log(ctx, l.now().Sub(start), err)
	if endRun != nil {
		endRun(RunEnd{Response: resp, Iterations: l.iteration, ToolCalls: l.toolCalls, Cost: l.runCost(), Err: err})
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
	panicked  atomic.Pointer[CallbackPanicError] // the first callback panic: the run ends with it
	secretsMu sync.Mutex
	secrets   []string // the declared secrets of every turn's calls, and of the history's (secrets.go)

	costs       costs
	acct        accounting // with Options.ContextBudget
	spiller     *spiller   // with ContextPolicy.SpillBytes
	cleared     int        // tool results cleared
	compactions int
}

func newLoop(opts Options, history []Message) *loop {
	l := &loop{opts: opts, resolver: opts.Resolver, history: history, breaker: newBreaker(opts.BreakerThreshold), spiller: newSpiller(opts.ContextPolicy)}
	if opts.Tools != nil {
		l.offered = newOffered(opts.Resolver, opts.Tools)
		l.resolver = l.offered
	}
	for _, m := range history {
		l.learnSecrets(m.ToolCalls) // a conversation resumed: its calls' secrets too
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
		tools := l.offeredTools()
		var ctxTokens int
		if l.opts.ContextBudget > 0 {
			var err error
			if ctxTokens, err = l.budget(ctx, n, tools); err != nil {
				return last, err
			}
		}
		var est float64
		if l.costs.chain.budgeted() {
			prompt := ctxTokens
			if l.opts.ContextBudget <= 0 {
				l.acct.offer(tools)
				prompt = l.acct.tokens(l.history)
				l.acct.sent()
			}
			var err error
			if est, err = l.checkCost(n, prompt); err != nil {
				return last, err
			}
		}
		t0 := l.now()
		var resp Response
		var err error
		if l.opts.Executor == nil {
			resp, err = l.send(ctx, send, tools)
		} else {
			resp, err = l.sendVia(ctx, send, tools)
		}
		modelDur := l.now().Sub(t0)
		l.acct.observe(resp.Usage)
		var cost Cost
		if err != nil {
			l.costs.chain.settle(len(l.costs.chain.meters), est, Cost{}) // no answer: what was set aside goes back
		} else {
			cost = l.priceCall(ctx, n, resp, est)
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return last, fmt.Errorf("agentloop: stopped in iteration %d: %w (model call: %w)", n, ctxErr, err)
			}
			var ee *ExecutorError
			if errors.As(err, &ee) {
				return last, err
			}
			return last, &LLMError{Iteration: n, Err: err}
		}
		last = resp
		l.emit(Event{Kind: EventResponse, Iteration: n, Response: &resp, Duration: modelDur})
		if err := l.failure(n); err != nil {
			return resp, err // before running its calls
		}
		it := Iteration{N: n, Response: resp, Calls: resp.ToolCalls, ModelDuration: modelDur, ContextTokens: ctxTokens, Cost: cost}
		if len(resp.ToolCalls) == 0 {
			l.history = append(l.history, resp.Message())
			l.iterationDone(it)
			if l.opts.Stop != nil {
				var msg string
				var ok bool
				l.rescue("Stop", func() {
					msg, ok = l.opts.Stop(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(n) }), resp)
				})
				if err := l.failure(n); err != nil {
					return resp, err
				}
				if ok {
					l.history = append(l.history, UserMessage(msg))
					continue
				}
			}
			return resp, l.failure(n)
		}

		calls := make([]llmtoolkit.Call, len(resp.ToolCalls))
		for i, c := range resp.ToolCalls {
			if c.Arguments == nil {
				c.Arguments = map[string]any{}
			}
			calls[i] = c
		}
		t1 := l.now()
		l.learnSecrets(calls) // before they run: what fails from here on is scrubbed of them
		results, durs, execErr := l.dispatch(ctx, n, calls)
		it.Results, it.CallDurations, it.ToolsDuration = results, durs, l.now().Sub(t1)
		l.toolCalls += len(calls)
		answer := resp
		answer.ToolCalls = calls
		l.history = append(l.history, answer.Message())
		for _, res := range results {
			l.history = append(l.history, ToolMessage(res))
		}
		l.iterationDone(it)
		if err := l.failure(n); err != nil {
			return resp, err
		}
		if execErr != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return resp, fmt.Errorf("agentloop: stopped in iteration %d: %w (%w)", n, ctxErr, execErr)
			}
			return resp, execErr
		}

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
				slog.Int("iteration", l.iteration), slog.String("panic", l.scrub(fmt.Sprint(v))), slog.String("stack", string(pe.Stack)))
			resp, err = Response{}, pe
		}
	}()
	return send(ctx, slices.Clip(l.history), tools)
}

// dispatch runs one turn's calls and returns their results and durations in
// call order. A halting call cancels the calls still running. With an
// Executor, the calls run through its Tools; the error is then an
// *ExecutorError when it failed (the results still answer every call).
func (l *loop) dispatch(ctx context.Context, n int, calls []llmtoolkit.Call) ([]llmtoolkit.Result, []time.Duration, error) {
	ctx, cancel := context.WithCancel(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(n) }))
	defer cancel()
	durs := make([]time.Duration, len(calls))
	if l.opts.Executor != nil {
		results, err := l.dispatchVia(ctx, cancel, n, calls, durs)
		keepTurnBudget(results, l.opts.MaxTurnResultBytes)
		return results, durs, err
	}
	results := make([]llmtoolkit.Result, len(calls))
	one := func(i int) {
		results[i], durs[i] = l.runCall(ctx, n, calls, i)
		if errors.Is(results[i].Err, llmtoolkit.ErrHalt) {
			cancel()
		}
	}
	run := min(len(calls), l.opts.MaxToolCalls)
	if l.opts.MaxParallel == 1 || run == 1 {
		for i := range run {
			one(i)
		}
	} else {
		sem := make(chan struct{}, l.opts.MaxParallel)
		var wg sync.WaitGroup
		for i := range run {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				one(i)
			})
		}
		wg.Wait()
	}
	for i := run; i < len(calls); i++ {
		one(i)
	}
	keepTurnBudget(results, l.opts.MaxTurnResultBytes)
	return results, durs, nil
}

// runCall performs call i of turn n in-process and returns its result and
// duration: the answer to a call past Options.MaxToolCalls, the
// offered-tools check, or llmtoolkit.Execute with the events, cut to
// Options.MaxTurnResultBytes. ctx carries the iteration. It is the one
// implementation of a tool call, for Run (with or without an Executor) and
// for RunToolCall.
func (l *loop) runCall(ctx context.Context, n int, calls []llmtoolkit.Call, i int) (llmtoolkit.Result, time.Duration) {
	call := calls[i]
	l.emit(Event{Kind: EventToolCall, Iteration: n, Index: i, Call: call})
	t0 := l.now()
	var res llmtoolkit.Result
	if i >= l.opts.MaxToolCalls {
		res = tooManyCalls(call, len(calls), l.opts.MaxToolCalls)
	} else if l.offered != nil && !l.offered.has(call.Name) {
		res = l.offered.notOffered(call)
	} else {
		cctx := ctx
		if l.opts.OnEvent != nil {
			cctx = llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{Show: func(d llmtoolkit.Display) {
				l.emit(Event{Kind: EventDisplay, Iteration: n, Index: i, Call: call, Display: &d})
			}})
			cctx = llmtoolkit.WithListeners(cctx, llmtoolkit.Listeners{Progress: func(p llmtoolkit.Progress) {
				l.emit(Event{Kind: EventProgress, Iteration: n, Index: i, Call: call, Progress: &p})
			}})
		}
		res = llmtoolkit.Execute(cctx, l.resolver, call)
		l.maybeSpill(ctx, n, i, call, &res)
		res.Content = cutResult(res.Content, l.opts.MaxTurnResultBytes, l.opts.MaxTurnResultBytes)
		fitParts(&res, l.opts.MaxTurnResultBytes-len(res.Content), l.opts.MaxTurnResultBytes)
	}
	d := l.now().Sub(t0)
	l.emit(Event{Kind: EventToolResult, Iteration: n, Index: i, Call: call, Result: &res, Duration: d})
	return res, d
}

// tooManyCalls is the answer to a call past Options.MaxToolCalls.
func tooManyCalls(call llmtoolkit.Call, asked, limit int) llmtoolkit.Result {
	err := fmt.Errorf("%w: call %q was not run: this answer asked for %d tool calls and one turn runs at most %d (Options.MaxToolCalls); ask again for the calls you still need, at most %d at a time",
		ErrTooManyCalls, call.Name, asked, limit, limit)
	return llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: err.Error(), IsError: true, Err: err}
}

// minKeep is the head of a result kept when a turn's budget is spent.
const minKeep = 256

// keepTurnBudget cuts, in call order, the results past the turn's budget
// of content bytes to what is left of it, at least minKeep bytes each
// (the answers to calls past MaxToolCalls are kept whole); their parts
// count too, each kept whole or dropped with a note (fitParts).
func keepTurnBudget(results []llmtoolkit.Result, budget int) {
	left := budget
	for i := range results {
		if errors.Is(results[i].Err, ErrTooManyCalls) {
			continue // short, and not run
		}
		c := results[i].Content
		if len(c) > left {
			results[i].Content = cutResult(c, max(left, minKeep), budget)
			c = results[i].Content
		}
		left = max(left-len(c), 0)
		left = max(left-fitParts(&results[i], left, budget), 0)
	}
}

// cutResult cuts content to at most n bytes (on a rune boundary), ending
// it with a line saying how much was cut and why (the line counted in n
// when n leaves room for it).
func cutResult(content string, n, budget int) string {
	if len(content) <= n {
		return content
	}
	keep := max(n-len(cutNote(len(content), len(content), budget)), 0)
	head := textutil.CutUTF8(content, keep)
	return head + cutNote(len(content)-len(head), len(content), budget)
}

func cutNote(cut, total, budget int) string {
	return fmt.Sprintf("\n[... %d of %d bytes cut: one turn keeps at most %d bytes of tool results (Options.MaxTurnResultBytes); ask for less at a time, or for a part]",
		cut, total, budget)
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

// now is Options.Now (a panic in it fails the run, as in the other
// callbacks), or time.Now.
func (l *loop) now() time.Time {
	if l.opts.Now == nil {
		return time.Now()
	}
	var t time.Time
	l.rescue("Now", func() { t = l.opts.Now() })
	return t
}

// emit passes e to Options.OnEvent, one event at a time.
func (l *loop) emit(e Event) {
	if l.opts.OnEvent == nil {
		return
	}
	l.eventMu.Lock()
	defer l.eventMu.Unlock()
	l.rescue("OnEvent", func() { l.opts.OnEvent(e) })
}

func (l *loop) iterationDone(it Iteration) {
	if l.opts.OnIteration != nil {
		l.rescue("OnIteration", func() { l.opts.OnIteration(it) })
	}
}

// rescue runs the host's callback name, turning a panic into the run's
// failure (logged with its stack) on whatever goroutine it runs.
func (l *loop) rescue(name string, fn func()) {
	defer func() {
		if v := recover(); v != nil {
			pe := &CallbackPanicError{Callback: name, Value: v, Stack: debug.Stack()}
			l.opts.Logger.Error("agentloop: Options."+name+" panicked", slog.String("panic", l.scrub(fmt.Sprint(v))), slog.String("stack", string(pe.Stack)))
			l.panicked.CompareAndSwap(nil, pe)
		}
	}()
	fn()
}

// failure returns the error that ends the run in iteration n when a
// callback panicked, else nil.
func (l *loop) failure(n int) error {
	if pe := l.panicked.Load(); pe != nil {
		return fmt.Errorf("agentloop: stopped in iteration %d: %w", n, pe)
	}
	return nil
}

// log writes the one record of a finished Run.
func (l *loop) log(ctx context.Context, d time.Duration, err error) {
	attrs := []slog.Attr{
		slog.Int("iterations", l.iteration),
		slog.Int("tool_calls", l.toolCalls),
		slog.Duration("duration", d),
	}
	if l.opts.ContextBudget > 0 || l.spiller != nil {
		attrs = append(attrs, slog.Int("context_tokens", l.acct.tokens(l.history)), slog.Int("results_cleared", l.cleared), slog.Int("compactions", l.compactions))
	}
	if c := l.runCost(); c.Calls > 0 || c.Unpriced > 0 {
		attrs = append(attrs, slog.Float64("cost_usd", c.USD))
		if c.Unpriced > 0 {
			attrs = append(attrs, slog.Int("unpriced_calls", c.Unpriced), slog.Any("missing_prices", c.Missing))
		}
	}
	level := slog.LevelDebug // quiet by default: a run that ends well is not news
	if err != nil {
		level = slog.LevelWarn
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	l.opts.Logger.LogAttrs(ctx, level, "agentloop: run finished", attrs...)
}
