package agent

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
)

// SpawnToolName is the name of the sub-agent tool ([SpawnAgent]).
const SpawnToolName = "spawn_agent"

// Defaults of [SubAgentConfig].
const (
	DefaultSubAgentIterations = 10
	DefaultSubAgentTimeout    = 10 * time.Minute
	DefaultMaxDepth           = 1
	// DefaultMaxSubAgents bounds the sub-agents one run starts, at every
	// depth (see [SubAgentConfig.MaxSubAgents]).
	DefaultMaxSubAgents = 16
	// DefaultMaxConcurrentSubAgents bounds how many of a run's sub-agents
	// run at once.
	DefaultMaxConcurrentSubAgents = 4
)

// ErrMaxDepth is wrapped by the error of a spawn_agent call made too deep:
// by a sub-agent when [SubAgentConfig.MaxDepth] is 1 (the default). It
// wraps [llmtoolkit.ErrLimitReached], as [ErrSubAgentBudget] does.
var ErrMaxDepth error = &limitError{"agent: sub-agents may not spawn sub-agents this deep"}

// SubAgentConfig configures [SpawnAgent].
type SubAgentConfig struct {
	// Model answers the sub-agent's turns (required): a provider's
	// SendFunc, usually the parent's.
	Model agentloop.SendFunc
	// Tools are the tools the host allows the sub-agent. Only those
	// annotated read-only are offered unless AllowMutating is set. Nil: the
	// sub-agent has no tools. Give them plain: a trace.Recorder of the
	// parent's stack records the sub-agent's calls too, with its agent id
	// (through [llmtoolkit.WrapForSubAgent]); a resolver already recorded
	// is not recorded twice.
	Tools llmtoolkit.Resolver
	// Permissions, when set, are the sub-agents' own: checked inside the
	// parent's (see [SpawnAgent]), they can refuse more, never allow more.
	// One Permissions is shared by every sub-agent of this tool.
	Permissions *Permissions
	// AllowMutating offers every tool of Tools, not only its read-only
	// ones.
	AllowMutating bool
	// Instructions are the sub-agent's system message.
	Instructions string
	// MaxIterations bounds the sub-agent's model calls; 0 means
	// [DefaultSubAgentIterations].
	MaxIterations int
	// Prices prices the sub-agent's model calls (agentloop.Options.Prices);
	// nil means the parent run's table.
	Prices agentloop.Prices
	// ModelName names the sub-agent's model for pricing when its answers
	// name none (agentloop.Options.Model).
	ModelName string
	// MaxCostUSD, when positive, is each sub-agent's money budget
	// (agentloop.Options.MaxCostUSD); the parent run's budget holds
	// beside it, whatever it is: the sub-agent stops, with an error
	// wrapping agentloop.ErrCostBudget, before a call that would pass
	// either.
	MaxCostUSD float64
	// Timeout is the sub-agent's deadline; 0 means [DefaultSubAgentTimeout].
	Timeout time.Duration
	// MaxDepth is how deep sub-agents may nest; 0 means [DefaultMaxDepth]
	// (a sub-agent cannot spawn).
	MaxDepth int
	// MaxSubAgents bounds the sub-agents one run starts, its sub-agents'
	// own included; the calls past it are refused with
	// [ErrSubAgentBudget]. 0 means [DefaultMaxSubAgents].
	MaxSubAgents int
	// MaxConcurrentSubAgents bounds how many of a run's sub-agents run at
	// once (at every depth); a call past it waits for one to end, within
	// its Timeout. 0 means [DefaultMaxConcurrentSubAgents].
	MaxConcurrentSubAgents int
	// NewID names each sub-agent. Nil means a 16-hex-digit id: in a durable
	// run (a run id on the call's context, llmtoolkit.Scope.RunID) derived
	// from the call's llmtoolkit.IdempotencyKey, so a sub-agent that runs
	// again after a crash keeps its id (its trace rows and spans stay
	// attributable to it); otherwise random.
	NewID func() string
	// OnEvent, when set, receives the sub-agent's loop events with its id,
	// one at a time, possibly from the goroutines of the sub-agent's
	// parallel calls. A panic in it fails the spawn_agent call.
	OnEvent func(id string, e agentloop.Event)
	// Logger receives each sub-agent run's record; nil means slog.Default().
	Logger *slog.Logger
	// Isolation is where each sub-agent works: IsolationNone ("" too)
	// on Tools, in the parent's folder; IsolationWorktree or
	// IsolationCopy in a workspace of its own made by Workspaces, on the
	// tools Workspaces makes for it (Tools is then not offered). See
	// [Workspaces].
	Isolation Isolation
	// ModelChoosesIsolation adds an isolation argument to spawn_agent:
	// the model picks none, worktree (when the root is in a git
	// repository) or copy for each sub-agent; without it, Isolation.
	ModelChoosesIsolation bool
	// Workspaces makes the sub-agents' workspaces (required when
	// Isolation is not none or ModelChoosesIsolation is set). With
	// WorkspaceConfig.ModelDecides, the spawn_agent resolver also offers
	// the finish_workspace tool.
	Workspaces *Workspaces
	// Tracer, when set, traces each sub-agent run and its model calls
	// (agentloop.Options.Tracer): with otelkit.Agent("NAME"), the run's
	// invoke_agent span nests under the spawn_agent call's span, its chat
	// spans under it, and its tool calls are tagged with NAME. Nil: the
	// sub-agent's runs are not traced (its tool calls still are, by an
	// instrumented resolver, untagged).
	Tracer agentloop.Tracer
}

type depthKey struct{}

// depthFrom returns how many sub-agents deep ctx is (0 for the top level).
func depthFrom(ctx context.Context) int {
	d, _ := ctx.Value(depthKey{}).(int)
	return d
}

// SpawnAgent returns the spawn_agent tool: each call runs a synchronous
// sub-agent on agentloop, with cfg's instructions, tools, iteration limit
// and deadline, and the parent call's context: its session, its trace
// attribution, its cancellation (cancelling the parent cancels the child).
// Each sub-agent gets an id, put on its calls' contexts with
// [llmtoolkit.Scope].AgentID (trace records it as agent_id). The call's
// result is the sub-agent's final answer; it shows a "subagent" Display
// ([SubAgentPayload]) whether it answered or not. A sub-agent that stops
// without an answer (iteration limit, deadline, cancellation, model error)
// fails the call with the reason. A call deeper than cfg.MaxDepth is
// refused with [ErrMaxDepth].
//
// The call returns at the sub-agent's deadline (or its parent's
// cancellation) even when one of the sub-agent's tools ignores its
// context: the stuck tool call keeps running on its own goroutine until
// the tool returns (Go cannot stop it), the sub-agent's loop then ends at
// its next check of its cancelled context, and what it returns is dropped.
// A panic in cfg.OnEvent, on whatever goroutine the sub-agent calls it,
// cancels the sub-agent and fails the call with a [*llmtoolkit.PanicError].
//
// The sub-agent runs under its parent's permissions: when the spawn_agent
// call went through one or more [Permissions.Guard]s, the sub-agent's tools
// are wrapped in each of them (outermost first: its mode, deny and allow
// rules, hooks and callback; mode switches by version, see
// [Permissions.ModeAt]), then in cfg.Permissions. It can only be refused
// more than its parent, never less. Do not wrap cfg.Tools in the parent's
// guard yourself: the callback would be asked twice.
//
// A run's sub-agents share one budget, kept by the outermost Permissions
// (by the tool itself for a call that went through no guard): at most
// cfg.MaxSubAgents started, at every depth, and cfg.MaxConcurrentSubAgents
// running at once. A call past the first is refused with
// [ErrSubAgentBudget]; a call past the second waits within its Timeout
// when the parent is the top-level agent, and is refused at once when it
// is itself a sub-agent (which holds a place: waiting could deadlock). A
// sub-agent stuck in a tool keeps its place until the tool returns.
//
// The tool is annotated read-only when every tool it offers its
// sub-agents is, so that the plan mode allows it.
func SpawnAgent(cfg SubAgentConfig) (llmtoolkit.Resolver, error) {
	switch {
	case cfg.Model == nil:
		return nil, fmt.Errorf("%w: SubAgentConfig.Model is nil; pass the SendFunc the sub-agents talk to", ErrInvalidConfig)
	case cfg.MaxIterations < 0 || cfg.Timeout < 0 || cfg.MaxDepth < 0 || cfg.MaxSubAgents < 0 || cfg.MaxConcurrentSubAgents < 0 || !(cfg.MaxCostUSD >= 0):
		return nil, fmt.Errorf("%w: SubAgentConfig limits must not be negative", ErrInvalidConfig)
	}
	switch cfg.Isolation {
	case "":
		cfg.Isolation = IsolationNone
	case IsolationNone, IsolationWorktree, IsolationCopy:
	default:
		return nil, fmt.Errorf("%w: SubAgentConfig.Isolation %q: use none, worktree or copy", ErrInvalidConfig, cfg.Isolation)
	}
	if (cfg.Isolation != IsolationNone || cfg.ModelChoosesIsolation) && cfg.Workspaces == nil {
		return nil, fmt.Errorf("%w: SubAgentConfig.Workspaces is nil; isolation %s needs the workspaces NewWorkspaces makes", ErrInvalidConfig, cfg.Isolation)
	}
	if cfg.Isolation == IsolationWorktree && cfg.Workspaces.repo == "" {
		return nil, fmt.Errorf("%w: SubAgentConfig.Isolation worktree needs a root inside a git repository with a commit, and %s is in none; use copy", ErrInvalidConfig, cfg.Workspaces.cfg.Root)
	}
	if cfg.MaxIterations == 0 {
		cfg.MaxIterations = DefaultSubAgentIterations
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = DefaultSubAgentTimeout
	}
	if cfg.MaxDepth == 0 {
		cfg.MaxDepth = DefaultMaxDepth
	}
	if cfg.MaxSubAgents == 0 {
		cfg.MaxSubAgents = DefaultMaxSubAgents
	}
	if cfg.MaxConcurrentSubAgents == 0 {
		cfg.MaxConcurrentSubAgents = DefaultMaxConcurrentSubAgents
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	s := &spawner{cfg: cfg, tools: cfg.Tools}
	if s.tools != nil && !cfg.AllowMutating {
		s.tools = llmtoolkit.ReadOnly(s.tools)
	}
	readOnly := !(cfg.Workspaces != nil && cfg.AllowMutating) // an apply writes the parent's tree
	if s.tools != nil {
		for _, t := range s.tools.Tools() {
			if t.Annotations == nil || !t.Annotations.ReadOnly {
				readOnly = false
			}
		}
	}
	props := map[string]any{
		"task":        map[string]any{"type": "string", "minLength": 1, "description": "The task, complete and self-contained."},
		"description": map[string]any{"type": "string", "maxLength": 200, "description": "A short label for the task (3 to 5 words)."},
	}
	desc := "Runs a sub-agent on a self-contained task (for example a search across the code) and returns its final answer. " +
		"The sub-agent starts with no memory of this conversation: say everything it needs in the task."
	if cfg.Isolation != IsolationNone {
		desc += " It works in a " + string(cfg.Isolation) + " of its own, not in your folder: its changes come back as a diff and a patch file."
	}
	if cfg.ModelChoosesIsolation {
		allowed := cfg.Workspaces.allowed()
		enum := make([]any, len(allowed))
		for i, a := range allowed {
			enum[i] = a
		}
		props["isolation"] = map[string]any{"type": "string", "enum": enum,
			"description": "Where the sub-agent works: none (in your folder), worktree (a git worktree on a new branch) or copy (a copy of the folder); " +
				"in a worktree or a copy its changes come back as a diff and a patch file, and sub-agents working in parallel do not overwrite each other. Default: " + string(cfg.Isolation) + "."}
	}
	s.def = llmtoolkit.MustTool(SpawnToolName, desc,
		map[string]any{
			"type":                 "object",
			"properties":           props,
			"required":             []any{"task"},
			"additionalProperties": false,
		})
	s.def.Annotations = &llmtoolkit.Annotations{ReadOnly: readOnly}
	s.list = []llmtoolkit.Tool{s.def}
	if cfg.Workspaces != nil && cfg.Workspaces.cfg.ModelDecides {
		s.finish = cfg.Workspaces.finishTool()
		s.list = append(s.list, s.finish)
	}
	return s, nil
}

type spawner struct {
	cfg    SubAgentConfig
	tools  llmtoolkit.Resolver
	def    llmtoolkit.Tool
	finish llmtoolkit.Tool // finish_workspace, when the model decides
	list   []llmtoolkit.Tool
	budget budget // for calls that reach it through no guard
}

func (s *spawner) Tools() []llmtoolkit.Tool { return s.list }

func (s *spawner) LookupTool(name string) (llmtoolkit.Tool, bool) {
	for _, t := range s.list {
		if t.Name == name {
			return t, true
		}
	}
	return llmtoolkit.Tool{}, false
}

func (s *spawner) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if call.Name == FinishToolName && len(s.list) > 1 {
		return s.cfg.Workspaces.resolveFinish(ctx, call)
	}
	if call.Name != SpawnToolName {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	depth := depthFrom(ctx)
	if depth >= s.cfg.MaxDepth {
		return "", fmt.Errorf("%w: this agent is %d level(s) deep and the limit is %d; do the task yourself", ErrMaxDepth, depth, s.cfg.MaxDepth)
	}
	task, _ := call.Arguments["task"].(string)
	desc, _ := call.Arguments["description"].(string)
	iso := s.cfg.Isolation
	if v, ok := call.Arguments["isolation"].(string); ok && s.cfg.ModelChoosesIsolation {
		iso = Isolation(v)
	}
	enclosing := workspaceFrom(ctx)
	if enclosing != nil && iso != IsolationNone {
		return "", fmt.Errorf("%w: a sub-agent working in a workspace cannot start a sub-agent in another; use isolation none (it then works in this workspace)", ErrWorkspace)
	}
	if iso == IsolationWorktree && s.cfg.Workspaces.repo == "" {
		return "", fmt.Errorf("%w: argument isolation: worktree needs a root inside a git repository with a commit; use copy", ErrWorkspace)
	}
	id := s.newID(ctx, call)
	payload := SubAgentPayload{ID: id, Description: desc, Isolation: string(iso)}

	// The sub-agent runs under the permissions of every guard the call went
	// through, and its own; the run's budget is kept by the outermost.
	parents := lineageFrom(ctx)
	tools := s.tools
	if enclosing != nil {
		// A sub-agent of a sub-agent in a workspace works in that
		// workspace, never in the top parent's folder.
		tools = enclosing.tools
		if !s.cfg.AllowMutating {
			tools = llmtoolkit.ReadOnly(tools)
		}
	}
	var ws *openWorkspace
	if iso != IsolationNone {
		key := ""
		if llmtoolkit.ScopeFrom(ctx).RunID != "" {
			// The same in every attempt of the call: a resumed run finds
			// the workspace again.
			sum := sha256.Sum256([]byte("workspace\x00" + llmtoolkit.IdempotencyKey(ctx, call)))
			key = "run-" + hex.EncodeToString(sum[:10])
		}
		o, err := s.cfg.Workspaces.make(ctx, id, iso, key)
		if err != nil {
			return "", fmt.Errorf("sub-agent not started: %w", err)
		}
		ws = o
		payload.Workspace, payload.Branch, payload.Resumed = o.ws.Root, o.ws.Branch, o.resumed
		tools = o.tools
		if !s.cfg.AllowMutating {
			tools = llmtoolkit.ReadOnly(tools)
		}
	}
	if tools != nil {
		// The parent's recorders see the sub-agent's calls (a no-op for a
		// resolver the host recorded itself), inside the guard as in the
		// parent's stack.
		tools = guardFor(llmtoolkit.WrapForSubAgent(ctx, tools), parents, s.cfg.Permissions)
	}
	b := &s.budget
	if len(parents) > 0 {
		b = &parents[0].subAgents
	}

	sctx := context.WithValue(llmtoolkit.WithScope(withParentTurn(ctx), func(sc *llmtoolkit.Scope) { sc.AgentID = id }), depthKey{}, depth+1)
	if ws != nil {
		sctx = context.WithValue(sctx, wsKey{}, ws)
	}
	sctx = llmtoolkit.WithListeners(sctx, llmtoolkit.Listeners{Show: func(llmtoolkit.Display) {}}) // the sub-agent's tools do not show on the parent's call
	sctx, cancel := context.WithTimeout(sctx, s.cfg.Timeout)
	defer cancel()
	// The jobs and terminals the sub-agent starts are its own (nobody
	// else may reach them): they end with it.
	sctx = calltask.WithLifetime(sctx, sctx.Done())
	release, err := b.acquire(sctx, depth, s.cfg.MaxSubAgents, s.cfg.MaxConcurrentSubAgents)
	if err != nil {
		if ws != nil {
			_ = s.cfg.Workspaces.remove(context.WithoutCancel(ctx), ws)
		}
		return "", fmt.Errorf("sub-agent not started: %w", err)
	}

	var msgs []agentloop.Message
	if s.cfg.Instructions != "" {
		msgs = append(msgs, agentloop.SystemMessage(s.cfg.Instructions))
	}
	if ws != nil && ws.resumed {
		task += "\n\n(This task was interrupted and is resumed: your workspace still holds what the interrupted attempt changed. Check it before you redo anything.)"
	}
	msgs = append(msgs, agentloop.UserMessage(task))
	var mu sync.Mutex // payload's counters: the run may outlive this call (see below)
	var hostPanic atomic.Pointer[llmtoolkit.PanicError]
	meter := &agentloop.Meter{}
	opts := agentloop.Options{
		Resolver:      tools,
		Tools:         []llmtoolkit.Tool{},
		MaxIterations: s.cfg.MaxIterations,
		Prices:        s.cfg.Prices,
		Model:         s.cfg.ModelName,
		MaxCostUSD:    s.cfg.MaxCostUSD,
		Meter:         meter,
		Logger:        s.cfg.Logger.With(slog.String("agent_id", id)),
		Tracer:        s.cfg.Tracer,
		OnIteration: func(it agentloop.Iteration) {
			mu.Lock()
			defer mu.Unlock()
			payload.Iterations++
			payload.ToolCalls += len(it.Calls)
			u := it.Response.Usage
			payload.Usage.InputTokens += u.InputTokens
			payload.Usage.OutputTokens += u.OutputTokens
			payload.Usage.CacheReadTokens += u.CacheReadTokens
			payload.Usage.CacheWriteTokens += u.CacheWriteTokens
			payload.Usage.ReasoningTokens += u.ReasoningTokens
		},
	}
	if tools != nil {
		opts.Tools = nil // offer the resolver's list
	}
	if s.cfg.OnEvent != nil {
		// OnEvent runs on the goroutines of the child's parallel calls: a
		// panic there fails this sub-agent (its run is cancelled), never
		// the host.
		opts.OnEvent = func(e agentloop.Event) {
			defer func() {
				if v := recover(); v != nil {
					pe := &llmtoolkit.PanicError{Value: fmt.Sprintf("SubAgentConfig.OnEvent panicked: %v", v), Stack: debug.Stack()}
					s.cfg.Logger.ErrorContext(ctx, "agent: SubAgentConfig.OnEvent panicked", slog.String("agent_id", id),
						slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
					hostPanic.CompareAndSwap(nil, pe)
					cancel()
				}
			}()
			s.cfg.OnEvent(id, e)
		}
	}
	start := time.Now()
	type outcome struct {
		resp agentloop.Response
		err  error
	}
	// The run goes on its own goroutine so that this call returns at the
	// deadline even when a tool of the sub-agent ignores its context. Such
	// a stuck call keeps its goroutine until the tool returns (Go cannot
	// stop it); the run then ends at its next check of the cancelled
	// context and its result is dropped.
	done := make(chan outcome, 1)
	go func() {
		defer release() // when the run ends, which may be after this call returned
		defer func() {
			if v := recover(); v != nil { // agentloop.Run rescues its callbacks' panics; this is a last resort
				done <- outcome{err: &llmtoolkit.PanicError{Value: fmt.Sprintf("the sub-agent's run panicked: %v", v), Stack: debug.Stack()}}
			}
		}()
		resp, _, err := agentloop.Run(sctx, msgs, s.cfg.Model, opts)
		done <- outcome{resp, err}
	}()
	var out outcome
	abandoned := false
	select {
	case out = <-done:
	case <-sctx.Done():
		select {
		case out = <-done: // it finished as the deadline came
		default:
			abandoned = true
			out.err = fmt.Errorf("the sub-agent's run was abandoned with a call still running: %w", sctx.Err())
		}
	}
	err = out.err
	mu.Lock()
	payload.DurationMS = time.Since(start).Milliseconds()
	cost := meter.Cost()
	payload.CostUSD, payload.UnpricedCalls, payload.MissingPrices = cost.USD, cost.Unpriced, strings.Join(cost.Missing, ", ")
	if pe := hostPanic.Load(); pe != nil {
		err = fmt.Errorf("sub-agent %s failed: %w", id, pe)
	} else if err != nil {
		err = s.failure(ctx, sctx, id, err)
	}
	if err != nil {
		payload.Error = err.Error()
	}
	shown := payload
	mu.Unlock()
	note := ""
	if ws != nil {
		// The run is over (or abandoned): its tools are closed, its
		// changes read, the workspace applied, kept, left waiting or
		// removed; the note names it in the answer, hence the audit row.
		note = s.cfg.Workspaces.finish(ctx, ws, err, abandoned, &shown)
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplaySubAgent, Payload: shown})
	if err != nil {
		if note != "" {
			return "", fmt.Errorf("%w %s", err, note)
		}
		return "", err
	}
	if note != "" {
		return out.resp.Content + "\n\n" + note, nil
	}
	return out.resp.Content, nil
}

// failure explains why sub-agent id stopped without an answer.
func (s *spawner) failure(parent, sub context.Context, id string, err error) error {
	switch {
	case parent.Err() != nil:
		return fmt.Errorf("sub-agent %s was cancelled with its parent: %w", id, parent.Err())
	case errors.Is(sub.Err(), context.DeadlineExceeded):
		return fmt.Errorf("sub-agent %s did not finish within its deadline (%v): %w", id, s.cfg.Timeout, context.DeadlineExceeded)
	case errors.Is(err, agentloop.ErrCostBudget):
		return fmt.Errorf("sub-agent %s stopped before a model call that would pass the money budget: %w", id, err)
	case errors.Is(err, agentloop.ErrMaxIterations):
		return fmt.Errorf("sub-agent %s reached its limit of %d iterations without a final answer: %w", id, s.cfg.MaxIterations, err)
	}
	return fmt.Errorf("sub-agent %s failed: %w", id, err)
}

// randomID returns 16 random hex digits.
// newID names the sub-agent of call: SubAgentConfig.NewID when set, else
// in a durable run a name derived from the call's idempotency key (the
// same on every attempt of the call), else a random one.
func (s *spawner) newID(ctx context.Context, call llmtoolkit.Call) string {
	if s.cfg.NewID != nil {
		return s.cfg.NewID()
	}
	if llmtoolkit.ScopeFrom(ctx).RunID != "" {
		sum := sha256.Sum256([]byte(llmtoolkit.IdempotencyKey(ctx, call)))
		return hex.EncodeToString(sum[:8])
	}
	return randomID()
}

func randomID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails
	return hex.EncodeToString(b[:])
}
