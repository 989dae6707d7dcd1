package temporal

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	sdktemporal "go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"
)

// Defaults applied to zero [RunInput] fields.
const (
	// DefaultModelTimeout bounds one attempt of a model call.
	DefaultModelTimeout = 10 * time.Minute
	// DefaultToolTimeout bounds one attempt of a tool call.
	DefaultToolTimeout = 10 * time.Minute
	// DefaultMaxAttempts is how many times a failed model or tool activity
	// is attempted in all.
	DefaultMaxAttempts = 3
)

// RunInput is the workflow's argument: the conversation and the loop's
// bounds ([agentloop.Options] with the same names), the approvals, and the
// activities' timeouts and retries. The model and the tools are the
// worker's ([Activities]). The zero value of each field means its default.
type RunInput struct {
	// Messages is the conversation to go on with.
	Messages []agentloop.Message `json:"messages"`
	// MaxIterations, MaxParallel, MaxToolCalls, MaxTurnResultBytes and
	// BreakerThreshold are the agentloop.Options of the same names.
	MaxIterations      int `json:"max_iterations,omitempty"`
	MaxParallel        int `json:"max_parallel,omitempty"`
	MaxToolCalls       int `json:"max_tool_calls,omitempty"`
	MaxTurnResultBytes int `json:"max_turn_result_bytes,omitempty"`
	BreakerThreshold   int `json:"breaker_threshold,omitempty"`
	// Approve names the tools whose calls wait for a person's [Approval]
	// before they run; "*" names every tool. The run waits durably (for
	// hours if need be, across worker restarts).
	Approve []string `json:"approve,omitempty"`
	// ApprovalTimeout, when positive, refuses the calls still undecided
	// that long after their turn started waiting. 0: wait for ever.
	ApprovalTimeout time.Duration `json:"approval_timeout,omitempty"`
	// ModelTimeout bounds one attempt of a model call (the activity's
	// StartToCloseTimeout). 0 means [DefaultModelTimeout].
	ModelTimeout time.Duration `json:"model_timeout,omitempty"`
	// ToolTimeout bounds one attempt of a tool call. 0 means
	// [DefaultToolTimeout].
	ToolTimeout time.Duration `json:"tool_timeout,omitempty"`
	// HeartbeatTimeout, when positive, is the tool activities'
	// HeartbeatTimeout: an attempt that records no heartbeat for that long
	// (no progress report, no tick of [Activities].HeartbeatEvery) is
	// failed and retried, and its context cancelled on the worker.
	// Heartbeats are also how a run's cancellation reaches a running tool.
	// 0: none. (A model call reports no progress: ModelTimeout bounds it.)
	HeartbeatTimeout time.Duration `json:"heartbeat_timeout,omitempty"`
	// Session is the session map the tools and the SendFunc get on their
	// contexts (llmtoolkit.Scope.Session), the same on every attempt and on
	// every worker. Put the run's tenant and conversation IDs there
	// (trace.SessionTenantID, trace.SessionConversationID) and the rows a
	// trace.Recorder writes on the worker, and the spans, stay attributable
	// to the same run however often it moves or resumes. Its values go
	// through JSON (numbers become float64).
	Session map[string]any `json:"session,omitempty"`
	// ModelRetry and ToolRetry are the activities' retry policies. Nil
	// means [DefaultMaxAttempts] attempts with Temporal's default backoff.
	ModelRetry *sdktemporal.RetryPolicy `json:"model_retry,omitempty"`
	ToolRetry  *sdktemporal.RetryPolicy `json:"tool_retry,omitempty"`
	// ContextBudget is agentloop.Options.ContextBudget, and ClearAt,
	// KeepToolResults, CompactAt and KeepRecent the
	// agentloop.ContextPolicy fields of the same names: the workflow
	// clears old results and compacts to keep the run inside the budget.
	ContextBudget   int `json:"context_budget,omitempty"`
	ClearAt         int `json:"clear_at,omitempty"`
	KeepToolResults int `json:"keep_tool_results,omitempty"`
	CompactAt       int `json:"compact_at,omitempty"`
	KeepRecent      int `json:"keep_recent,omitempty"`
	// Compact turns compaction on (with ContextBudget): each compaction is
	// a model activity of its own (ModelInput.Compaction), where the
	// worker summarizes the span with Activities.Options.ContextPolicy.
	// Summarize when set, else asks the model (Send, offered no tools) for
	// a summary with agentloop.SummaryPrompt. Spilling is the worker's:
	// set ContextPolicy.SpillBytes and SpillRoot in Activities.Options
	// (the files stay; remove them with ContextPolicy.RemoveSpillFiles and
	// the workflow ID when the run is over).
	Compact bool `json:"compact,omitempty"`
	// MaxPayloadBytes is the size each payload of the run is kept under:
	// Temporal refuses a larger one (the server's limit.blobSize.error).
	// A tool result's parts that would pass it go to [Activities].Blobs
	// when the worker has a store, else are left out with a note to the
	// model; a model call whose history would pass it ends the run with
	// [ErrPayloadTooLarge] before it is sent. 0 means
	// [DefaultMaxPayloadBytes]; negative: no guard (parts travel as they
	// are, as before).
	MaxPayloadBytes int `json:"max_payload_bytes,omitempty"`
}

// RunOutput is the workflow's result: what [agentloop.Run] returned.
type RunOutput struct {
	// Response is the last response of the model (zero if none).
	Response agentloop.Response `json:"response"`
	// History is the conversation: the input messages, then every message
	// the run added, each tool call paired with its tool message.
	History []agentloop.Message `json:"history"`
	// Err is the error the run ended with (an agentloop.ErrMaxIterations,
	// a *HaltedError, an *LLMError...), in its stored form; nil when the
	// model answered. [RunOutput.Error] restores it.
	Err *agentloop.ErrorOutcome `json:"error,omitempty"`
}

// Error returns the error the run ended with, restored from its stored form
// (errors.Is holds for the agentloop and llmtoolkit sentinels), or nil.
func (o RunOutput) Error() error { return o.Err.Unpack() }

// ModelInput is the argument of the model activity.
type ModelInput struct {
	// Iteration is the 1-based iteration of the call.
	Iteration int `json:"iteration"`
	// Messages is the history sent.
	Messages []agentloop.Message `json:"messages"`
	// Session is the run's (see [RunInput]).
	Session map[string]any `json:"session,omitempty"`
	// Compaction marks a compaction (agentloop.ModelStep.Compaction):
	// Messages is the span to summarize followed by the request for a
	// summary.
	Compaction bool `json:"compaction,omitempty"`
}

// ToolInput is the argument of the tool activity: call Index of the Count
// calls of turn Iteration.
type ToolInput struct {
	Iteration int             `json:"iteration"`
	Index     int             `json:"index"`
	Count     int             `json:"count"`
	Call      llmtoolkit.Call `json:"call"`
	// MaxToolCalls, MaxTurnResultBytes and Session are the run's (see
	// [RunInput]).
	MaxToolCalls       int            `json:"max_tool_calls,omitempty"`
	MaxTurnResultBytes int            `json:"max_turn_result_bytes,omitempty"`
	Session            map[string]any `json:"session,omitempty"`
	// ToolFingerprint is the agentloop.ToolFingerprint of the call's tool
	// as the model was offered it ([ModelResult]); the activity refuses
	// the call on a worker where the tool is missing or defined otherwise
	// ([ErrAgentChanged]). Empty: no check.
	ToolFingerprint string `json:"tool_fingerprint,omitempty"`
	// MaxPayloadBytes is the run's (see [RunInput]): the size the tool
	// result is kept under.
	MaxPayloadBytes int `json:"max_payload_bytes,omitempty"`
}

// Workflow runs [agentloop.Run] as a Temporal workflow: each model call is
// a [ModelActivityName] activity and each tool call a [ToolActivityName]
// activity, whose recorded outcomes a replay reads back instead of running
// them again. It is registered under [WorkflowName] by [Register]; start
// it with client.ExecuteWorkflow(ctx, opts, WorkflowName, in).
//
// It answers the [PendingApprovalsQuery] and takes [ApprovalSignal]
// signals. A run that ends with an error of the loop (the model failed,
// a tool halted, MaxIterations) completes with the error in
// [RunOutput].Err and the history, so that it can be resumed; the
// workflow fails only when it is cancelled or its input is invalid.
func Workflow(ctx workflow.Context, in RunInput) (RunOutput, error) {
	e := &executor{ctx: ctx, in: in, approvals: newApprovals(ctx, in)}
	if err := workflow.SetQueryHandler(ctx, PendingApprovalsQuery, func() ([]PendingApproval, error) {
		return append([]PendingApproval{}, e.approvals.pending...), nil
	}); err != nil {
		return RunOutput{}, fmt.Errorf("llmtoolkit: registering the %s query: %w", PendingApprovalsQuery, err)
	}
	opts := agentloop.Options{
		MaxIterations:      in.MaxIterations,
		MaxParallel:        in.MaxParallel,
		MaxToolCalls:       in.MaxToolCalls,
		MaxTurnResultBytes: in.MaxTurnResultBytes,
		BreakerThreshold:   in.BreakerThreshold,
		Executor:           e,
		Logger:             slog.New(workflowLogHandler{ctx: ctx}),
		Now:                func() time.Time { return workflow.Now(ctx) }, // the durations replay the same
		ContextBudget:      in.ContextBudget,
		ContextPolicy: agentloop.ContextPolicy{
			ClearAt: in.ClearAt, KeepToolResults: in.KeepToolResults, CompactAt: in.CompactAt, KeepRecent: in.KeepRecent,
		},
	}
	if in.Compact {
		opts.ContextPolicy.Summarize = summarizeOutsideActivity
	}
	// Run's context is a plain one that never ends: the workflow's
	// cancellation reaches the activities through e.ctx, and ends the run
	// with an *ExecutorError.
	//
	// Temporal's workflowcheck flags Run, whose call graph holds the
	// in-process path (goroutines, llmtoolkit.Execute, time.Now). With an
	// Executor, Run takes none of it: its steps are the executor's, it
	// starts no goroutine (context.WithCancel on a Background context
	// starts none), its clock is Options.Now (the workflow's), and slog's
	// record time is dropped by the workflow's logger; every replay issues
	// the same commands. The replay tests check it.
	resp, history, err := agentloop.Run(context.Background(), in.Messages, sendOutsideActivity, opts) //workflowcheck:ignore
	if errors.Is(err, ErrAgentChanged) {
		return RunOutput{}, sdktemporal.NewNonRetryableApplicationError(err.Error(), AgentChangedType, nil)
	}
	if errors.Is(err, ErrPayloadTooLarge) {
		return RunOutput{}, sdktemporal.NewNonRetryableApplicationError(err.Error(), PayloadTooLargeType, nil)
	}
	if errors.Is(err, agentloop.ErrInvalidOptions) {
		return RunOutput{}, sdktemporal.NewNonRetryableApplicationError(err.Error(), "llmtoolkit.InvalidOptions", err)
	}
	if cerr := ctx.Err(); cerr != nil {
		return RunOutput{}, cerr
	}
	return RunOutput{Response: resp, History: history, Err: agentloop.EncodeError(err)}, nil
}

// sendOutsideActivity is the SendFunc Run gets in the workflow: the model
// is called by the model activity, so it must never be called here.
func sendOutsideActivity(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
	return agentloop.Response{}, errors.New("llmtoolkit: the model was called in workflow code; it is called by the model activity")
}

// summarizeOutsideActivity is the summarizer Run gets in the workflow: a
// compaction is run by the model activity, so it must never be called
// here.
func summarizeOutsideActivity(context.Context, []agentloop.Message) (string, error) {
	return "", errors.New("llmtoolkit: the summarizer was called in workflow code; it is called by the model activity")
}

// executor is the workflow's agentloop.Executor: it runs each step as an
// activity. Its methods run in workflow code and only use the workflow's
// deterministic primitives (futures, selectors, timers, signals).
type executor struct {
	ctx       workflow.Context
	in        RunInput
	approvals *approvals
	offered   map[string]string // the fingerprints of the tools offered with the last model call (nil: no check)
	changed   error             // a call refused for ErrAgentChanged: the run stops
}

func retryPolicy(p *sdktemporal.RetryPolicy) *sdktemporal.RetryPolicy {
	if p != nil {
		return p
	}
	return &sdktemporal.RetryPolicy{MaximumAttempts: DefaultMaxAttempts}
}

func orDefault(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// Model runs the model call as an activity keyed by its iteration, a
// compaction as one keyed compact/ITERATION.
func (e *executor) Model(_ context.Context, step agentloop.ModelStep, _ func(context.Context) (agentloop.Response, error)) (agentloop.Response, error) {
	id := modelActivityID(step.Iteration)
	if step.Compaction {
		id = fmt.Sprintf("compact/%d", step.Iteration)
	}
	ctx := workflow.WithActivityOptions(e.ctx, workflow.ActivityOptions{
		ActivityID:          id,
		StartToCloseTimeout: orDefault(e.in.ModelTimeout, DefaultModelTimeout),
		RetryPolicy:         retryPolicy(e.in.ModelRetry),
	})
	in := ModelInput{Iteration: step.Iteration, Messages: step.Messages, Session: e.in.Session, Compaction: step.Compaction}
	if err := checkPayload(in, maxPayload(e.in.MaxPayloadBytes)); err != nil {
		return agentloop.Response{}, err // the server would refuse it: the run ends, saying why
	}
	var out ModelResult
	err := workflow.ExecuteActivity(ctx, ModelActivityName, in).Get(ctx, &out)
	if !step.Compaction { // a summary offers no tools
		e.offered = out.Tools
	}
	if err != nil {
		if cerr := e.ctx.Err(); cerr != nil {
			return agentloop.Response{}, fmt.Errorf("the run was cancelled during the model call: %w", cerr)
		}
		// The attempts are spent: the model's failure, as recorded.
		return agentloop.Response{}, agentloop.EncodeError(activityFailure("the model call", err)).Unpack()
	}
	return out.Unpack()
}

// Tools runs the turn's calls as activities, started in call order, at most
// step.MaxParallel at once, each keyed by its iteration, index and call ID.
// Calls that need a person's approval wait for it first; a halting result
// cancels the calls still running.
func (e *executor) Tools(_ context.Context, step agentloop.ToolsStep, run func(context.Context, int) llmtoolkit.Result) ([]llmtoolkit.Result, error) {
	calls := step.Calls
	results := make([]llmtoolkit.Result, len(calls))
	maxCalls := e.in.MaxToolCalls
	if maxCalls <= 0 {
		maxCalls = agentloop.DefaultMaxToolCalls
	}
	n := min(len(calls), maxCalls)
	// Calls past MaxToolCalls are answered without running: run does
	// that in-process, with no I/O, the same on every replay.
	for i := n; i < len(calls); i++ {
		results[i] = run(context.Background(), i)
	}
	decisions, err := e.approvals.await(e.ctx, step.Iteration, calls, n)
	if err != nil {
		return results, fmt.Errorf("the run was cancelled while it waited for approvals: %w", err)
	}
	tctx, cancelTurn := workflow.WithCancel(e.ctx)
	defer cancelTurn()
	tctx = workflow.WithActivityOptions(tctx, workflow.ActivityOptions{
		StartToCloseTimeout: orDefault(e.in.ToolTimeout, DefaultToolTimeout),
		HeartbeatTimeout:    e.in.HeartbeatTimeout,
		RetryPolicy:         retryPolicy(e.in.ToolRetry),
	})
	sel := workflow.NewSelector(e.ctx)
	running, next, halted := 0, 0, false
	maxPar := max(step.MaxParallel, 1)
	start := func(i int) {
		call := calls[i]
		if ap, ok := decisions[i]; ok && !ap.Approved {
			results[i] = deniedResult(call, ap)
			return
		}
		if halted {
			results[i] = notRun(call, "an earlier call of the turn halted the run")
			return
		}
		actx := workflow.WithActivityOptions(tctx, withID(workflow.GetActivityOptions(tctx), toolActivityID(step.Iteration, i, call.ID)))
		f := workflow.ExecuteActivity(actx, ToolActivityName, ToolInput{
			Iteration: step.Iteration, Index: i, Count: len(calls), Call: call,
			MaxToolCalls: e.in.MaxToolCalls, MaxTurnResultBytes: e.in.MaxTurnResultBytes, Session: e.in.Session,
			ToolFingerprint: e.offered[call.Name], MaxPayloadBytes: e.in.MaxPayloadBytes,
		})
		running++
		sel.AddFuture(f, func(f workflow.Future) {
			running--
			var out agentloop.ToolOutcome
			if err := f.Get(tctx, &out); err != nil {
				results[i] = failedCall(call, err)
				if isAgentChanged(err) && e.changed == nil {
					e.changed = fmt.Errorf("%w (call %s of turn %d)", ErrAgentChanged, call.ID, step.Iteration)
				}
				return
			}
			results[i] = out.Result()
			if errors.Is(results[i].Err, llmtoolkit.ErrHalt) {
				halted = true
				cancelTurn()
			}
		})
	}
	for next < n || running > 0 {
		for next < n && running < maxPar {
			start(next)
			next++
		}
		if running == 0 {
			continue
		}
		sel.Select(e.ctx)
		if cerr := e.ctx.Err(); cerr != nil {
			return results, fmt.Errorf("the run was cancelled during its tool calls: %w", cerr)
		}
	}
	if e.changed != nil {
		return results, e.changed // the run stops: its agent is not the one its calls were written for
	}
	return results, nil
}

func withID(o workflow.ActivityOptions, id string) workflow.ActivityOptions {
	o.ActivityID = id
	return o
}

// The activity IDs: a run's steps are keyed by iteration, call index and
// call ID, so that a replay matches each recorded outcome to its step.
func modelActivityID(iteration int) string { return fmt.Sprintf("model/%d", iteration) }

func toolActivityID(iteration, index int, callID string) string {
	return fmt.Sprintf("tool/%d/%d/%s", iteration, index, callID)
}

// failedCall is the result of a tool call whose activity failed for good
// (its attempts spent, or cancelled by a halting call): the model reads
// the failure. The original error kinds of a Retryable error travel in the
// failure's details.
func failedCall(call llmtoolkit.Call, err error) llmtoolkit.Result {
	rerr := agentloop.EncodeError(activityFailure(fmt.Sprintf("tool %q", call.Name), err)).Unpack()
	if sdktemporal.IsCanceledError(err) {
		rerr = agentloop.EncodeError(fmt.Errorf("tool %q was cancelled: an earlier call of the turn halted the run: %w", call.Name, context.Canceled)).Unpack()
	}
	return llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: rerr.Error(), IsError: true, Err: rerr}
}

// notRun is the result of a call the turn did not start.
func notRun(call llmtoolkit.Call, why string) llmtoolkit.Result {
	err := fmt.Errorf("tool %q was not run: %s: %w", call.Name, why, context.Canceled)
	return llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: err.Error(), IsError: true, Err: err}
}

// activityFailure describes an activity's final failure, keeping the kinds
// of the error the activity failed with when it sent them (see
// [RetryableError]) and saying when it timed out.
func activityFailure(what string, err error) error {
	var appErr *sdktemporal.ApplicationError
	if errors.As(err, &appErr) && appErr.HasDetails() {
		var eo agentloop.ErrorOutcome
		if appErr.Details(&eo) == nil {
			return fmt.Errorf("%s failed after its attempts: %w", what, eo.Unpack())
		}
	}
	if errors.As(err, &appErr) && appErr.Type() == heartbeatTimeoutType {
		return fmt.Errorf("%s timed out: no heartbeat within RunInput.HeartbeatTimeout: %w", what, context.DeadlineExceeded)
	}
	var te *sdktemporal.TimeoutError
	if errors.As(err, &te) {
		return fmt.Errorf("%s timed out (%s): %w", what, te.TimeoutType(), context.DeadlineExceeded)
	}
	return fmt.Errorf("%s failed: %s", what, err.Error())
}

// workflowLogHandler sends Run's log record to the workflow's logger,
// which drops it while the workflow replays.
type workflowLogHandler struct {
	ctx   workflow.Context
	attrs []any
}

func (h workflowLogHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h workflowLogHandler) Handle(_ context.Context, r slog.Record) error {
	kv := append([]any{}, h.attrs...)
	r.Attrs(func(a slog.Attr) bool {
		kv = append(kv, a.Key, a.Value.Any())
		return true
	})
	l := workflow.GetLogger(h.ctx)
	switch {
	case r.Level >= slog.LevelError:
		l.Error(r.Message, kv...)
	case r.Level >= slog.LevelWarn:
		l.Warn(r.Message, kv...)
	case r.Level >= slog.LevelInfo:
		l.Info(r.Message, kv...)
	default:
		l.Debug(r.Message, kv...)
	}
	return nil
}

func (h workflowLogHandler) WithAttrs(as []slog.Attr) slog.Handler {
	kv := append([]any{}, h.attrs...)
	for _, a := range as {
		kv = append(kv, a.Key, a.Value.Any())
	}
	return workflowLogHandler{ctx: h.ctx, attrs: kv}
}

func (h workflowLogHandler) WithGroup(string) slog.Handler { return h }
