package checkpoint

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
)

// ResolverOption configures [Resolver].
type ResolverOption func(*resolver)

// WithEveryCall takes a checkpoint before every call too (kind call), not
// only before the first call of each turn.
func WithEveryCall() ResolverOption { return func(r *resolver) { r.everyCall = true } }

// WithRequired refuses a call whose checkpoint could not be saved (its
// error is the call's); by default the failure is logged at Warn, counted
// ([Failures]) and the call runs.
func WithRequired() ResolverOption { return func(r *resolver) { r.required = true } }

// WithLogger sets the logger of checkpoint failures (default slog.Default()).
func WithLogger(l *slog.Logger) ResolverOption { return func(r *resolver) { r.log = l } }

// Resolver wraps inner so that the root is checkpointed before the first
// call of every turn (the turn of [llmtoolkit.Scope].Turn, as agentloop.Run
// sets it): what any tool then changes (file tools, bash, a background job
// or a sub-agent writing under the root) is in the next turn's checkpoint,
// and a rewind to a turn's checkpoint takes back that turn and every one
// after it. The other calls of the turn wait for that checkpoint, so none
// runs before it is taken. The checkpoint is attributed from the call's
// context ([AttributionFrom]) with the first call's id, and keyed by the
// run, agent and iteration when the context has a run id
// ([llmtoolkit.Scope].RunID, which the durable engines set): a turn resumed
// after a crash keeps its first checkpoint. Save the state after the last
// turn with [Checkpointer.Save]. The definitions pass through unchanged.
//
// Background jobs (codetools' run_in_background, known by the job
// Displays their calls show) write when they like: a checkpoint names in
// Jobs exactly the calls whose jobs ran at some point since the previous
// one (running at it, or started since), so a turn's diff tells the job's
// writes are among its changes. A job's end is recorded when it comes
// (codetools reports it whether or not a later call looks), so a job that
// ended is named by the next checkpoint and by none after it.
func Resolver(inner llmtoolkit.Resolver, c *Checkpointer, opts ...ResolverOption) llmtoolkit.Resolver {
	r := &resolver{inner: inner, c: c, log: slog.Default()}
	for _, o := range opts {
		o(r)
	}
	return r
}

type resolver struct {
	inner     llmtoolkit.Resolver
	c         *Checkpointer
	everyCall bool
	required  bool
	log       *slog.Logger

	mu       sync.Mutex
	last     llmtoolkit.Turn
	lastErr  error
	failures atomic.Int64

	jobsMu  sync.Mutex
	running map[int]string      // job id -> the call that started it, until it ends
	ran     map[string]struct{} // calls whose jobs ran since the last checkpoint
	ended   map[int]string      // job id -> its call, for an end reported before its start was seen
}

func (r *resolver) Tools() []llmtoolkit.Tool { return r.inner.Tools() }

// LookupTool finds a definition as the inner resolver does.
func (r *resolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	return llmtoolkit.FindTool(r.inner, name)
}

// Failures returns how many checkpoints a [Resolver] could not save; 0
// for any other resolver.
func Failures(r llmtoolkit.Resolver) int64 {
	if cr, ok := r.(*resolver); ok {
		return cr.failures.Load()
	}
	return 0
}

func (r *resolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if err := r.before(ctx, call); err != nil && r.required {
		return "", err
	}
	ctx = calltask.WithLater(ctx, func(e calltask.Event) {
		if e.Kind == jobEndEvent {
			r.jobEnded(call.ID, e.JobID)
		}
	})
	out, err := r.inner.Resolve(ctx, call)
	if d, ok := llmtoolkit.ShownDisplay(ctx); ok && d.Kind == displayJob {
		r.observeJob(call, d)
	}
	return out, err
}

// displayJob is the Display kind of codetools' background jobs (a
// JobPayload: camelCase keys, always present).
const displayJob = "job"

// jobEndEvent is the kind of codetools' report of a job's end
// (calltask.Later), made once the job has ended, whoever watches it.
const jobEndEvent = "job_end"

// jobEnded records the end of job id, started by the call callID: it ran
// in the current interval (the next checkpoint names it) and no longer
// runs (the one after does not). An end reported before the call's own
// job Display was seen (a job that ends at once) is kept, so that the
// Display does not mark it running again.
func (r *resolver) jobEnded(callID string, id int) {
	r.jobsMu.Lock()
	defer r.jobsMu.Unlock()
	r.initJobs()
	r.ran[callID] = struct{}{}
	if owner, ok := r.running[id]; ok && owner == callID {
		delete(r.running, id)
		return
	}
	r.ended[id] = callID
}

func (r *resolver) initJobs() {
	if r.running == nil {
		r.running, r.ran, r.ended = map[int]string{}, map[string]struct{}{}, map[int]string{}
	}
}

// observeJob learns from a call's job Display which jobs run: one shown
// running is the job of the call that started it (its first Display),
// one shown ended is no longer.
func (r *resolver) observeJob(call llmtoolkit.Call, d llmtoolkit.Display) {
	b, err := json.Marshal(d.Payload)
	if err != nil {
		return
	}
	var p struct {
		Event string `json:"event"`
		JobID *int   `json:"jobId"`
		State string `json:"state"`
	}
	if json.Unmarshal(b, &p) != nil || p.JobID == nil {
		return
	}
	r.jobsMu.Lock()
	defer r.jobsMu.Unlock()
	r.initJobs()
	owner, known := r.running[*p.JobID]
	if p.Event == "start" && p.State != "running" { // ended within its call
		r.ran[call.ID] = struct{}{}
		delete(r.running, *p.JobID)
		return
	}
	if p.State == "running" {
		if by, ok := r.ended[*p.JobID]; ok && (p.Event != "start" || by == call.ID) {
			delete(r.ended, *p.JobID) // its end was reported before this Display
			return
		}
		if p.Event == "start" {
			r.running[*p.JobID] = call.ID // a job id used again is a new job
			return
		}
		if !known {
			r.running[*p.JobID] = call.ID
		}
		return
	}
	if known { // ended: it ran since the last checkpoint, and no more
		r.ran[owner] = struct{}{}
		delete(r.running, *p.JobID)
	}
}

// jobCalls returns the calls whose jobs may have written since the last
// checkpoint, sorted, and starts the next interval.
func (r *resolver) jobCalls() []string {
	r.jobsMu.Lock()
	defer r.jobsMu.Unlock()
	set := map[string]struct{}{}
	for c := range r.ran {
		set[c] = struct{}{}
	}
	for _, c := range r.running {
		set[c] = struct{}{}
	}
	clear(r.ran)
	if len(set) == 0 {
		return nil
	}
	out := make([]string, 0, len(set))
	for c := range set {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// turnKey keys a turn's checkpoint when the run has an id.
func turnKey(ctx context.Context, kind Kind, call llmtoolkit.Call) string {
	run := llmtoolkit.ScopeFrom(ctx).RunID
	it, inLoop := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0
	if run == "" || !inLoop {
		return "" // no turn to resume: each call is its own
	}
	key := string(kind) + "/" + run + "/" + llmtoolkit.ScopeFrom(ctx).AgentID + "/" + strconv.Itoa(it)
	if kind == KindCall {
		key += "/" + call.ID
	}
	return key
}

func (r *resolver) before(ctx context.Context, call llmtoolkit.Call) error {
	turn, inTurn := llmtoolkit.ScopeFrom(ctx).Turn, llmtoolkit.ScopeFrom(ctx).Turn != (llmtoolkit.Turn{})
	a := AttributionFrom(ctx)
	a.CallID = call.ID
	r.mu.Lock()
	defer r.mu.Unlock()
	if !inTurn || turn != r.last || r.everyCall {
		a.Jobs = r.jobCalls()
	}
	sctx := WithAttribution(ctx, a)
	if !inTurn || turn != r.last {
		_, err := r.c.Save(sctx, KindTurn, turnKey(ctx, KindTurn, call))
		r.last, r.lastErr = turn, err
		if err != nil {
			r.fail(call, err)
		}
		return err // the turn's checkpoint is also the state before this call
	}
	if !r.everyCall {
		return r.lastErr
	}
	_, err := r.c.Save(sctx, KindCall, turnKey(ctx, KindCall, call))
	if err != nil {
		r.fail(call, err)
	}
	return err
}

func (r *resolver) fail(call llmtoolkit.Call, err error) {
	r.failures.Add(1)
	r.log.Warn("checkpoint: could not save the checkpoint before a call; the call runs without it",
		slog.String("tool", call.Name), slog.String("call_id", call.ID), slog.String("error", err.Error()))
}

// CutHistory returns history up to the turn that checkpoint cp begins (a
// turn checkpoint of [Resolver]): the messages before the assistant
// message that asked for cp's call, so that a host rewinding code and
// conversation together runs the loop again from there. ok is false when
// no message holds the call (a manual checkpoint, or a history from
// another run).
func CutHistory(history []agentloop.Message, cp Checkpoint) (cut []agentloop.Message, ok bool) {
	if cp.CallID == "" {
		return history, false
	}
	for i, m := range history {
		if m.Role != agentloop.RoleAssistant {
			continue
		}
		for _, c := range m.ToolCalls {
			if c.ID == cp.CallID {
				return history[:i:i], true
			}
		}
	}
	return history, false
}

// String describes the wrapper in logs.
func (r *resolver) String() string { return fmt.Sprintf("checkpoint.Resolver(%s)", r.c.name) }
