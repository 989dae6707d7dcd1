package temporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// ErrHeartbeatTimeout is the cause of a tool's (or the model call's)
// context cancellation when its activity recorded no heartbeat for its
// HeartbeatTimeout: Temporal has failed the attempt, and will run another.
var ErrHeartbeatTimeout = errors.New("llmtoolkit: no heartbeat within the activity's HeartbeatTimeout")

// heartbeatTimeoutType is the type of the application error an attempt
// without heartbeat fails with.
const heartbeatTimeoutType = "llmtoolkit.HeartbeatTimeout"

// Activities are the worker's side of a run: the model and the tools,
// which the workflow's steps call. Register them with [Register].
type Activities struct {
	// Send calls the model. Required.
	Send agentloop.SendFunc
	// Options are the worker's loop options: the Resolver (or Tools) that
	// runs the calls and lists the tools offered to the model, OnEvent
	// (each call's events, on the worker), Logger. The loop's bounds
	// (MaxToolCalls, MaxTurnResultBytes...) are the run's, from
	// [RunInput]; Executor is ignored.
	Options agentloop.Options
	// HeartbeatEvery, when positive, records a heartbeat of each running
	// activity that often, whether or not the tool reports progress: the
	// worker is alive. 0: heartbeats come only from the tools' progress
	// reports (llmtoolkit.ReportProgress), so a tool that reports none
	// for the run's HeartbeatTimeout is deemed stuck.
	HeartbeatEvery time.Duration
	// Blobs, when set, keeps the bytes of big parts (a tool's images and
	// documents) out of the run's Temporal payloads: each part of a tool
	// result larger than InlinePartBytes is put there, and the history
	// holds a reference ([BlobScheme]) that the model activity reads back
	// before it calls the model ([ResolveParts] does it for a host reading
	// [RunOutput].History). Every worker of the task queue must reach the
	// same store ([DirBlobs] on a shared folder, or the host's object
	// store). Nil: parts travel in the payloads, and those that would
	// make a tool result larger than RunInput.MaxPayloadBytes are left
	// out with a note to the model.
	Blobs BlobStore
	// InlinePartBytes is the size above which a part goes to Blobs. 0
	// means [DefaultInlinePartBytes].
	InlinePartBytes int
}

// Registry is where [Register] registers the workflow and the activities:
// a worker.Worker, or a testsuite.TestWorkflowEnvironment.
type Registry interface {
	RegisterWorkflowWithOptions(w any, options workflow.RegisterOptions)
	RegisterActivityWithOptions(a any, options activity.RegisterOptions)
}

// Register registers [Workflow] under [WorkflowName] and a's activities
// under [ModelActivityName] and [ToolActivityName].
func Register(r Registry, a *Activities) error {
	if r == nil {
		return errors.New("temporal.Register: the registry is nil; pass the worker.Worker")
	}
	if a == nil || a.Send == nil {
		return errors.New("temporal.Register: Activities.Send is nil; set it to the function that calls the model")
	}
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	r.RegisterActivityWithOptions(a.ModelCall, activity.RegisterOptions{Name: ModelActivityName})
	r.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolActivityName})
	return nil
}

// tools returns the tools offered to the model: Options.Tools, or the
// Resolver's list read now.
func (a *Activities) tools() []llmtoolkit.Tool {
	if a.Options.Tools != nil {
		return a.Options.Tools
	}
	if a.Options.Resolver == nil {
		return nil
	}
	if rf, ok := a.Options.Resolver.(llmtoolkit.ResolverFunc); ok && rf == nil {
		return nil
	}
	return a.Options.Resolver.Tools()
}

func (a *Activities) logger() *slog.Logger {
	if a.Options.Logger != nil {
		return a.Options.Logger
	}
	return slog.Default()
}

// ModelCall is the model activity: it calls Send with the history and the
// worker's tools and returns the outcome in its stored form. A panic of
// Send is the call's error (an agentloop.ModelPanicError). An error of
// Send marked [Retryable] fails the attempt, so Temporal runs it again.
// A compaction (in.Compaction, see [RunInput].Compact) is summarized
// instead: by Options.ContextPolicy.Summarize when set, else by the model.
// The parts the history holds by reference ([Activities].Blobs) are read
// back first; one that cannot be fails the activity.
func (a *Activities) ModelCall(ctx context.Context, in ModelInput) (ModelResult, error) {
	if a.Send == nil {
		return ModelResult{}, sdktemporal.NewNonRetryableApplicationError("Activities.Send is nil; set it to the function that calls the model", "llmtoolkit.Config", nil)
	}
	hctx, stop := a.heartbeats(ctx)
	defer stop()
	msgs, err := a.resolve(hctx, in.Messages) // the parts kept in Activities.Blobs
	if err != nil {
		return ModelResult{}, err
	}
	in.Messages = msgs
	resp, prints, err := a.send(llmtoolkit.WithScope(runContext(hctx, in.Session), func(sc *llmtoolkit.Scope) { sc.StartTurn(in.Iteration) }), in)
	if err != nil {
		if ferr := attemptFailure(ctx, hctx, err); ferr != nil {
			return ModelResult{}, ferr
		}
	}
	return ModelResult{ModelOutcome: agentloop.EncodeModel(resp, err), Tools: prints}, nil
}

// send calls the model with the worker's tools, and returns their
// fingerprints too (toolPrints).
func (a *Activities) send(ctx context.Context, in ModelInput) (resp agentloop.Response, prints map[string]string, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &agentloop.ModelPanicError{Value: v, Stack: debug.Stack()}
			a.logger().ErrorContext(ctx, "llmtoolkit: the SendFunc panicked", slog.Int("iteration", in.Iteration),
				slog.String("panic_type", fmt.Sprintf("%T", v)), slog.String("stack", string(pe.Stack)))
			resp, err = agentloop.Response{}, pe
		}
	}()
	tools := a.tools()
	prints = toolPrints(tools)
	if in.Compaction {
		resp, err = a.summarize(ctx, in.Messages)
		return resp, prints, err
	}
	resp, err = a.Send(ctx, in.Messages, tools)
	return resp, prints, err
}

// summarize runs a compaction: the worker's summarizer on the span (the
// messages but the last, agentloop.SummaryPrompt), or the model, offered
// no tools, on the span and the prompt.
func (a *Activities) summarize(ctx context.Context, msgs []agentloop.Message) (agentloop.Response, error) {
	if sum := a.Options.ContextPolicy.Summarize; sum != nil {
		span := msgs
		if n := len(span); n > 0 && span[n-1].Role == agentloop.RoleUser && span[n-1].Content == agentloop.SummaryPrompt {
			span = span[:n-1]
		}
		s, err := sum(ctx, span)
		return agentloop.Response{Content: s, StopReason: "compaction"}, err
	}
	return a.Send(ctx, msgs, nil)
}

// ToolCall is the tool activity: it performs the call with
// agentloop.RunToolCall and the worker's Options, on a context that
// carries the run's workflow ID as its run ID (so that
// llmtoolkit.IdempotencyKey(ctx, call) is the call's key, the same on
// every attempt) and the run's session, and returns the result in its
// stored form. The tool's progress reports heartbeat the activity; the tool's
// context is cancelled when the activity is (the run cancelled, a halting
// call of the same turn, the timeout) or records no heartbeat for its
// HeartbeatTimeout. A result whose error is marked [Retryable] fails the
// attempt, so Temporal runs it again.
func (a *Activities) ToolCall(ctx context.Context, in ToolInput) (agentloop.ToolOutcome, error) {
	if in.Count <= in.Index || in.Index < 0 {
		return agentloop.ToolOutcome{}, sdktemporal.NewNonRetryableApplicationError(
			fmt.Sprintf("ToolInput.Index is %d of %d calls; send 0 <= Index < Count", in.Index, in.Count), "llmtoolkit.InvalidInput", nil)
	}
	if err := a.checkTool(in.Call, in.ToolFingerprint); err != nil {
		return agentloop.ToolOutcome{}, err
	}
	hctx, stop := a.heartbeats(ctx)
	defer stop()
	opts := a.Options
	opts.Executor = nil
	opts.MaxToolCalls, opts.MaxTurnResultBytes = in.MaxToolCalls, in.MaxTurnResultBytes
	user := opts.OnEvent
	opts.OnEvent = func(e agentloop.Event) {
		if e.Kind == agentloop.EventProgress && e.Progress != nil {
			activity.RecordHeartbeat(ctx, *e.Progress)
			beat(hctx)
		}
		if user != nil {
			user(e)
		}
	}
	// RunToolCall reads calls[Index] (the workflow answers the calls past
	// MaxToolCalls itself, the only ones whose answer counts the calls).
	calls := make([]llmtoolkit.Call, in.Index+1)
	calls[in.Index] = in.Call
	res := agentloop.RunToolCall(runContext(hctx, in.Session), opts, in.Iteration, calls, in.Index)
	if err := a.fitParts(hctx, &res, maxPayload(in.MaxPayloadBytes)); err != nil {
		return agentloop.ToolOutcome{}, err
	}
	if res.Err != nil {
		if ferr := attemptFailure(ctx, hctx, res.Err); ferr != nil {
			return agentloop.ToolOutcome{}, ferr
		}
	}
	return agentloop.EncodeResult(res), nil
}

// attemptFailure returns the error that fails the activity's attempt
// instead of recording err as the call's outcome: when err is marked
// Retryable, or when the attempt itself ended (the activity cancelled,
// timed out, or without heartbeat), so that Temporal, not the model,
// decides what comes next. Else nil.
func attemptFailure(actx, hctx context.Context, err error) error {
	if errors.Is(err, ErrRetryable) {
		return sdktemporal.NewApplicationErrorWithOptions(err.Error(), "llmtoolkit.Retryable",
			sdktemporal.ApplicationErrorOptions{Details: []any{agentloop.EncodeError(err)}})
	}
	if cerr := actx.Err(); cerr != nil {
		return cerr
	}
	if cause := context.Cause(hctx); errors.Is(cause, ErrHeartbeatTimeout) {
		return sdktemporal.NewApplicationError(cause.Error(), heartbeatTimeoutType)
	}
	return nil
}

// heartbeatState is what a running activity's heartbeat watch shares.
type heartbeatState struct {
	last atomic.Int64 // unix nanoseconds of the last heartbeat
}

type heartbeatKey struct{}

// beat notes a heartbeat recorded for the activity of ctx.
func beat(ctx context.Context) {
	if s, ok := ctx.Value(heartbeatKey{}).(*heartbeatState); ok {
		s.last.Store(time.Now().UnixNano())
	}
}

// heartbeats returns the context the step runs with, and the function that
// ends its watch. The context is cancelled, with [ErrHeartbeatTimeout] as
// its cause, when no heartbeat was recorded for the activity's
// HeartbeatTimeout; with HeartbeatEvery, a ticker records one that often.
func (a *Activities) heartbeats(ctx context.Context) (context.Context, func()) {
	info := activity.GetInfo(ctx)
	if info.HeartbeatTimeout <= 0 && a.HeartbeatEvery <= 0 {
		return ctx, func() {}
	}
	s := &heartbeatState{}
	s.last.Store(time.Now().UnixNano())
	hctx, cancel := context.WithCancelCause(context.WithValue(ctx, heartbeatKey{}, s))
	done := make(chan struct{})
	var wg sync.WaitGroup
	tick := a.HeartbeatEvery
	check := info.HeartbeatTimeout / 4
	wg.Go(func() {
		defer func() {
			if v := recover(); v != nil {
				a.logger().Error("llmtoolkit: the heartbeat watch panicked", slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
			}
		}()
		var tickC, checkC <-chan time.Time
		if tick > 0 {
			t := time.NewTicker(tick)
			defer t.Stop()
			tickC = t.C
		}
		if info.HeartbeatTimeout > 0 {
			t := time.NewTicker(max(check, time.Millisecond))
			defer t.Stop()
			checkC = t.C
		}
		for {
			select {
			case <-done:
				return
			case <-hctx.Done():
				return
			case <-tickC:
				activity.RecordHeartbeat(ctx)
				beat(hctx)
			case <-checkC:
				if time.Since(time.Unix(0, s.last.Load())) > info.HeartbeatTimeout {
					cancel(fmt.Errorf("%w (%s, attempt %d of activity %s)", ErrHeartbeatTimeout, info.HeartbeatTimeout, info.Attempt, info.ActivityID))
					return
				}
			}
		}
	})
	return hctx, func() {
		close(done)
		wg.Wait()
		cancel(nil)
	}
}

// runContext puts the run's identity on the activity's ctx: its workflow
// ID as the run ID (llmtoolkit.Scope.RunID, so that
// llmtoolkit.IdempotencyKey is unique across runs and the same on every
// attempt), and the run's session map, when it has one.
func runContext(ctx context.Context, s map[string]any) context.Context {
	if id := activity.GetInfo(ctx).WorkflowExecution.ID; id != "" {
		ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.RunID = id })
	}
	if s != nil {
		ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = s })
	}
	return ctx
}
