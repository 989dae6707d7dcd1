package dbos

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
	_ "github.com/dbos-inc/dbos-transact-golang/dbos/driver/sqlite" // the SQLite system database
	"github.com/dbos-inc/dbos-transact-golang/dbos/internals"
	"github.com/google/uuid"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// DefaultApprovalTimeout is how long a run waits for a person's approval
// by default before the call is denied.
const DefaultApprovalTimeout = 7 * 24 * time.Hour

// workflowName is the name the run's workflow is registered under: the
// recorded runs name it, so it must not change between versions.
const workflowName = "llmtoolkit.agentloop.Run"

// Errors callers branch on.
var (
	// ErrInvalidConfig is wrapped by the errors of [New] for an unusable
	// [Config].
	ErrInvalidConfig = errors.New("durable/dbos: invalid configuration")
	// ErrRunNotFound is wrapped by the errors of [Engine.Result],
	// [Engine.Pending] and [Engine.Approve] for a run ID never started.
	ErrRunNotFound = errors.New("durable/dbos: no run with this ID")
)

// AgentFunc builds what a run needs that cannot be recorded: the model
// (its SendFunc) and the loop's Options (the Resolver with its tools,
// hooks, the Tracer...). The Engine calls it at the start of each attempt
// of a run, the first one and each resumed one, with the run's context
// (see [Engine] for what it carries) and its [Run]: it must build the same
// agent for the same run, or the resumed run stops with [ErrAgentChanged]
// (which wraps transact.ErrStepNondeterminism): the fingerprint of the
// agent (tools, schemas, facts, system prompt, loop options, context
// policy) is the run's first recorded step. What the SendFunc does (the
// model, a prompt it adds) is not seen. Options.Executor is set by the
// Engine.
type AgentFunc func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error)

// Run describes one run to its [AgentFunc].
type Run struct {
	// ID is the run's ID, as given to [Engine.Start].
	ID string
	// ConversationID is [ConversationID](ID).
	ConversationID string
	// Input is what the run was started with.
	Input Input
}

// Input is what a run starts from. It is recorded: keep it JSON.
type Input struct {
	// Messages are the conversation so far (the prompt).
	Messages []agentloop.Message `json:"messages"`
	// TenantID, a UUID when set, is the tenant package trace attributes
	// the run's tool calls to (with the run's ConversationID).
	TenantID string `json:"tenant_id,omitempty"`
	// Meta is free for the host: its AgentFunc reads it (a model name, a
	// user...).
	Meta map[string]string `json:"meta,omitempty"`
}

// Config configures an [Engine].
type Config struct {
	// DatabaseURL is the DBOS system database: "sqlite:PATH" (SQLite, no
	// server; the file is created) or a PostgreSQL URL or key=value DSN.
	// Required.
	DatabaseURL string
	// AppName names the application in the system database. Empty means
	// "llmtoolkit".
	AppName string
	// ExecutorID is this process's identity: at [Engine.Launch] it resumes
	// the interrupted runs of this executor ID. Give every process running
	// at the same time its own (a process that launches with the ID of a
	// live one takes its runs over). Empty means DBOS's default, "local"
	// (or the DBOS__VMID environment variable).
	ExecutorID string
	// ApplicationVersion is the version of the code that runs; DBOS
	// resumes only the runs started by the same version. Empty means
	// DBOS's default: a hash of the binary (or DBOS__APPVERSION).
	ApplicationVersion string
	// Agent builds each run's model and options. Required.
	Agent AgentFunc
	// ApprovalTimeout is how long a run waits for a person's approval
	// ([AskPerson]) before the call is denied. 0 means
	// [DefaultApprovalTimeout].
	ApprovalTimeout time.Duration
	// Logger receives DBOS's records. Nil means slog.Default().
	Logger *slog.Logger
}

// Engine runs agent loops as DBOS workflows: each run under an ID, each of
// its model calls and tool calls a recorded step. Make one per process
// with [New], then [Engine.Launch] it.
//
// Every attempt of a run is attributed to the run: its context carries
// trace.WithConversation(Input.TenantID, ConversationID(runID), 0), so
// package trace's rows of a resumed run carry the same tenant and
// conversation IDs as those of its first attempt; and the run span that
// Options.Tracer starts (package otelkit's invoke_agent span) gets the
// attributes gen_ai.conversation.id (ConversationID(runID)) and
// llmtoolkit.run.id (runID), the same in every attempt.
type Engine struct {
	cfg   Config
	ctx   transact.Context
	plain bool // tests: run the loop without the executor, to measure what the steps save
	lock  executorLock
}

// New checks cfg, opens the system database (creating its tables) and
// registers the run's workflow. Call [Engine.Launch] next.
func New(ctx context.Context, cfg Config) (*Engine, error) {
	if cfg.DatabaseURL == "" {
		return nil, fmt.Errorf("%w: Config.DatabaseURL is empty; give \"sqlite:PATH\" or a PostgreSQL URL", ErrInvalidConfig)
	}
	if cfg.Agent == nil {
		return nil, fmt.Errorf("%w: Config.Agent is nil; give the function that builds a run's model and options", ErrInvalidConfig)
	}
	if cfg.AppName == "" {
		cfg.AppName = "llmtoolkit"
	}
	if cfg.ApprovalTimeout <= 0 {
		cfg.ApprovalTimeout = DefaultApprovalTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := prepareStoreFile(cfg.DatabaseURL, cfg.Logger); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	dctx, err := transact.NewContext(ctx, transact.Config{
		AppName:            cfg.AppName,
		DatabaseURL:        cfg.DatabaseURL,
		ExecutorID:         cfg.ExecutorID,
		ApplicationVersion: cfg.ApplicationVersion,
		Logger:             cfg.Logger,
	})
	if err != nil {
		return nil, fmt.Errorf("%w: opening the system database: %w", ErrEngine, err)
	}
	e := &Engine{cfg: cfg, ctx: dctx}
	transact.RegisterWorkflow(dctx, e.workflow, transact.WithWorkflowName(workflowName))
	return e, nil
}

// Launch starts the engine: it resumes every run of this executor that
// was interrupted (the process died, or was shut down, while it ran), each
// from its last recorded step, and starts serving. Interrupted runs of
// another application version are not resumed (DBOS's rule): Launch logs
// them, by version, at Warn level. A resumed run's result
// is read with [Engine.Result].
//
// Launch fails with [ErrExecutorInUse] when another live process runs with
// the same executor ID on the same database (an advisory lock on
// PostgreSQL, an flock on a file beside a SQLite database).
func (e *Engine) Launch() error {
	lock, err := lockExecutor(e.ctx, e.cfg.DatabaseURL, e.cfg.AppName, transact.GetExecutorID(e.ctx))
	if err != nil {
		return err
	}
	if err := transact.Launch(e.ctx); err != nil {
		if lock != nil {
			lock.release()
		}
		return fmt.Errorf("%w: launching: %w", ErrEngine, err)
	}
	e.lock = lock
	e.logOtherVersions()
	return nil
}

// Shutdown stops the engine, waiting up to timeout for the runs in
// progress to stop: they are not cancelled, the next Launch resumes them.
func (e *Engine) Shutdown(timeout time.Duration) error {
	err := transact.Shutdown(e.ctx, timeout)
	if e.lock != nil {
		err = errors.Join(err, e.lock.release()) // after the runs stopped
		e.lock = nil
	}
	if err != nil {
		return fmt.Errorf("%w: shutting down: %w", ErrEngine, err)
	}
	return nil
}

// Start starts a run under id with in, and returns without waiting for it.
// Starting an id again does not start a second run: it is the same run
// (running, or finished with its result). The run goes on when ctx ends;
// stop it with [Engine.Cancel].
func (e *Engine) Start(ctx context.Context, id string, in Input) error {
	if id == "" {
		return fmt.Errorf("%w: the run ID is empty; give each run a unique ID", ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := e.otherVersion(id); err != nil {
		return err
	}
	if _, err := transact.RunWorkflow(e.ctx, e.workflow, in, transact.WithWorkflowID(id)); err != nil {
		return fmt.Errorf("%w: starting run %q: %w", ErrEngine, id, err)
	}
	return nil
}

// Run starts a run under id with in, as [Engine.Start] does, and waits for
// its result, as [Engine.Result] does (without polling the database when
// the run runs in this process).
func (e *Engine) Run(ctx context.Context, id string, in Input) (Result, error) {
	if id == "" {
		return Result{}, fmt.Errorf("%w: the run ID is empty; give each run a unique ID", ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	if err := e.otherVersion(id); err != nil {
		return Result{}, err
	}
	h, err := transact.RunWorkflow(e.ctx, e.workflow, in, transact.WithWorkflowID(id))
	if err != nil {
		return Result{}, fmt.Errorf("%w: starting run %q: %w", ErrEngine, id, err)
	}
	return e.wait(ctx, id, h)
}

// Cancel stops the run id: its step in progress is abandoned (not
// recorded) and it does not resume.
func (e *Engine) Cancel(ctx context.Context, id string) error {
	if err := transact.CancelWorkflow(e.ctx, id); err != nil {
		return fmt.Errorf("%w: cancelling run %q: %w", ErrEngine, id, err)
	}
	return nil
}

// Result waits for the run id to finish (or ctx to end) and returns its
// result, in this process or after it was resumed in another one. A run
// interrupted under another application version, which this engine would
// never resume, is an error wrapping [ErrOtherVersion] at once. A run
// that ended with an error (the loop's) returns its Result with Err set
// and a nil error; the error is the engine's, or ctx's.
func (e *Engine) Result(ctx context.Context, id string) (Result, error) {
	if err := e.otherVersion(id); err != nil {
		return Result{}, err
	}
	h, err := transact.RetrieveWorkflow[Result](transact.From(e.ctx, ctx), id) // the handle stops waiting when ctx ends
	if err != nil {
		if errors.Is(err, transact.ErrNonExistentWorkflow) {
			return Result{}, fmt.Errorf("%w: %q", ErrRunNotFound, id)
		}
		return Result{}, fmt.Errorf("%w: finding run %q: %w", ErrEngine, id, err)
	}
	r, err := h.GetResult(transact.WithHandlePollingInterval(resultPolling))
	if err != nil {
		if ctx.Err() != nil {
			return Result{}, ctx.Err()
		}
		return r, runError(id, err)
	}
	return r, nil
}

// resultPolling is how often Result reads a run's status while it waits
// for a run of another process.
const resultPolling = 50 * time.Millisecond

// wait waits for the result of the run id through its handle h, started
// in this process (a channel, no polling; it ends at the latest when the
// engine shuts down).
func (e *Engine) wait(ctx context.Context, id string, h transact.WorkflowHandle[Result]) (Result, error) {
	type out struct {
		r   Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- out{err: fmt.Errorf("%w: reading run %q panicked: %v", ErrEngine, id, v)}
			}
		}()
		r, err := h.GetResult(transact.WithHandlePollingInterval(resultPolling))
		done <- out{r, err}
	}()
	select {
	case <-ctx.Done():
		return Result{}, ctx.Err()
	case o := <-done:
		if o.err != nil {
			return o.r, runError(id, o.err)
		}
		return o.r, nil
	}
}

// Pending returns the approval the run id waits for, or false.
func (e *Engine) Pending(ctx context.Context, id string) (Approval, bool, error) {
	a, err := transact.GetEvent[Approval](e.ctx, id, pendingEvent, 0)
	switch {
	case errors.Is(err, transact.ErrTimeout):
		return Approval{}, false, nil
	case errors.Is(err, transact.ErrNonExistentWorkflow):
		return Approval{}, false, fmt.Errorf("%w: %q", ErrRunNotFound, id)
	case err != nil:
		return Approval{}, false, fmt.Errorf("%w: reading the approval of run %q: %w", ErrEngine, id, err)
	}
	return a, a.CallID != "", nil
}

// Approve answers the approval of the call callID of the run id (see
// [AskPerson]): the run, waiting in this process or in another one, or
// not running at all until its next Launch, goes on with d. Answering a
// call twice delivers the first answer only.
func (e *Engine) Approve(ctx context.Context, id, callID string, d agent.Decision) error {
	if callID == "" {
		return fmt.Errorf("%w: the call ID is empty; pass Approval.CallID from Engine.Pending", ErrInvalidConfig)
	}
	if err := transact.Send(e.ctx, id, d, approvalTopic(callID), transact.WithIdempotencyKey(id+"/"+callID)); err != nil {
		if errors.Is(err, transact.ErrNonExistentWorkflow) {
			return fmt.Errorf("%w: %q", ErrRunNotFound, id)
		}
		return fmt.Errorf("%w: answering call %s of run %q: %w", ErrEngine, callID, id, err)
	}
	return nil
}

// runNamespace derives the conversation IDs of runs.
var runNamespace = uuid.MustParse("6f1c1f5e-3b8a-4c1e-9d55-0b7a1c2d9e41")

// ConversationID is the conversation ID of the run id: a UUID (version 5)
// derived from id alone, so that every attempt of a run, and every process,
// attributes the run's trace rows to the same conversation.
func ConversationID(id string) string {
	return uuid.NewSHA1(runNamespace, []byte(id)).String()
}

// workflow is one attempt of a run: it builds the agent and runs the loop
// with the executor that records its steps.
func (e *Engine) workflow(wf transact.Context, in Input) (Result, error) {
	id, err := transact.GetWorkflowID(wf)
	if err != nil {
		return Result{}, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	run := Run{ID: id, ConversationID: ConversationID(id), Input: in}
	// The run's ID keys every tool's side effects (llmtoolkit.IdempotencyKey)
	// and its conversation attributes every trace row, in every attempt;
	// the session map carries the same tenant and conversation to what
	// reads it (checkpoints, jobs, otelkit, package agent).
	ctx := llmtoolkit.WithScope(trace.WithConversation(wf, in.TenantID, run.ConversationID, 0), func(sc *llmtoolkit.Scope) {
		sc.RunID = id
		sc.Session = runSession(sc.Session, in.TenantID, run.ConversationID)
	})
	send, opts, err := e.buildAgent(ctx, run)
	if err != nil {
		return Result{}, fmt.Errorf("durable/dbos: building the agent of run %q: %w", id, err)
	}
	if !e.plain {
		if err := e.checkAgent(wf, id, in, opts); err != nil {
			return Result{}, err
		}
		opts.Executor = &executor{wf: wf, eng: e}
	}
	opts.Tracer = newRunTracer(opts.Tracer, run)
	resp, history, err := agentloop.Run(ctx, in.Messages, send, opts)
	if err != nil && errors.Is(err, ErrEngine) {
		return Result{}, err // DBOS failed: the run ends with its status ERROR and this error
	}
	// The run is over: its spill files (agentloop.ContextPolicy), which
	// the loop leaves under an Executor so that a resumed attempt finds
	// them, go now.
	if p := opts.ContextPolicy; !p.KeepSpillFiles {
		if rerr := p.RemoveSpillFiles(id); rerr != nil {
			e.cfg.Logger.WarnContext(ctx, "durable/dbos: the run's spill files could not all be removed", "run", id, "error", rerr.Error())
		}
	}
	return Result{Response: resp, Messages: history, Error: agentloop.EncodeError(err)}, nil
}

// runSession returns the session map of a run's calls: s (a copy) with
// the run's tenant (when set) and conversation under the keys package
// trace reads, unless s names them already.
func runSession(s map[string]any, tenantID, conversationID string) map[string]any {
	out := make(map[string]any, len(s)+2)
	for k, v := range s {
		out[k] = v
	}
	if _, ok := out[trace.SessionTenantID]; !ok && tenantID != "" {
		out[trace.SessionTenantID] = tenantID
	}
	if _, ok := out[trace.SessionConversationID]; !ok {
		out[trace.SessionConversationID] = conversationID
	}
	return out
}

// buildAgent calls the AgentFunc, turning its panic into an error.
func (e *Engine) buildAgent(ctx context.Context, run Run) (send agentloop.SendFunc, opts agentloop.Options, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the AgentFunc panicked: %v", v)
		}
	}()
	return e.cfg.Agent(ctx, run)
}

// Recover takes over the interrupted runs of other executors (processes
// that died and will not come back under their ExecutorID): each resumes
// here, from its last recorded step. It returns how many runs it took.
// Call it after [Engine.Launch]. Two processes recovering the same
// executors at once take each run once: DBOS moves a run to its recovery
// queue and hands it to one process, atomically.
func (e *Engine) Recover(ctx context.Context, executorIDs ...string) (int, error) {
	if len(executorIDs) == 0 {
		return 0, fmt.Errorf("%w: Recover needs the executor IDs of the processes that died", ErrInvalidConfig)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	rt, err := internals.RuntimeOf(e.ctx)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrEngine, err)
	}
	hs, err := rt.RecoverPendingWorkflows(executorIDs)
	if err != nil {
		return 0, fmt.Errorf("%w: recovering the runs of %v: %w", ErrEngine, executorIDs, err)
	}
	return len(hs), nil
}
