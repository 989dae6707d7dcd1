package trace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"gorm.io/gorm"
)

// ErrUnattributed is wrapped by the error of a call that a [Recorder]
// refuses before the tool runs because its trace could not name a tenant
// and a conversation (missing or malformed IDs). Bind them with
// [WithConversation] or the session map, give [WithDefaultConversation] to
// [Record], or opt into [WithBestEffort].
var ErrUnattributed = errors.New("trace: the call cannot be attributed to a tenant and a conversation")

// Recorder is a [llmtoolkit.Resolver] that records every call of the
// resolver it wraps as one [Trace]. Build it with [Record]. It is safe for
// concurrent use.
//
// It lists the wrapped resolver's tools with itself added to each
// definition's [llmtoolkit.Tool.Observers]: a call that [llmtoolkit.Execute]
// answers without resolving it (refused by validation, or run as a recipe)
// still reaches the Recorder through the definition, whatever wraps it
// (Compose, Filter, a session, a user's own wrapper). So every call that
// reaches a Recorder leaves exactly one row, or is refused with a clear
// error: see [Record].
type Recorder struct {
	r             llmtoolkit.Resolver
	tools         *llmtoolkit.ObservedTools // the wrapped resolver's, observed by rec
	db            *gorm.DB                  // single inserts: prepared statement, no transaction
	batch         *gorm.DB                  // batch inserts
	rowsPerInsert int
	sqlite        bool                                          // the database is SQLite: names ignore case
	busy          sqliteBusy                                    // its busy timeout (sqlite_bound.go)
	tables        tableChecks                                   // tables known to exist (on SQLite, not to differ only by case)
	inserts       inserts                                       // the INSERT statements, by table and row count
	subWrap       func(llmtoolkit.Resolver) llmtoolkit.Resolver // forSubAgent, put on each call's context
	cfg           config
	table         table   // WithTable's, or the default
	tableErr      error   // why WithTable's name is invalid
	sealer        *sealer // WithSharedSecrets', or nil
	sealerErr     error   // why its key is unusable

	recorded, dropped, refused, failed, duplicates atomic.Int64

	runs  runSecrets  // secrets of recipe steps, until their parent's row
	convs convSecrets // secrets of earlier rows, by conversation

	// WithAsync writer.
	mu     sync.RWMutex // held for reading while enqueueing, for writing by Close
	closed bool
	queue  chan queued
	done   chan struct{}

	failMu   sync.Mutex
	failures int   // async writes lost
	firstErr error // the first of them
}

// Record wraps r so that each call is timed and written to db as one trace
// (call [Migrate] on db first). The promise, exactly:
//
//   - Every call that reaches the Recorder leaves exactly one row: calls it
//     resolves, calls [llmtoolkit.Execute] refused (invalid arguments) and
//     recipe calls, whose steps leave rows of their own with ParentID set to
//     the recipe call's row. A job a call started that outlives it
//     (codetools' background jobs and terminals) leaves a row of its own
//     when it ends ("job_end"), attributed as the call that started it.
//   - A call that cannot be attributed to a tenant and a conversation (from
//     [WithConversation], else the session map's tenant_id and
//     conversation_id, else [WithDefaultConversation]) is refused before the
//     tool runs, with an error wrapping [ErrUnattributed] that names what is
//     missing, unless [WithBestEffort] is given: then it runs, and its row is
//     counted as dropped ([Recorder.Stats]) and logged. A call refused before
//     it reached the Recorder cannot be refused again: if it cannot be
//     attributed, it is counted and logged the same way. The session map is
//     the one a [llmtoolkit.Session] binds for what it wraps: put the
//     Recorder inside the Session (Record, then PrepareSession), or bind
//     WithConversation where the Recorder is outside it.
//   - A database error after the tool ran is never silent: it is logged,
//     counted and given to [WithOnError]; with [WithStrict] it also fails the call.
//   - Nothing secret is stored: argument fields named by the tool's
//     [llmtoolkit.Tool.SensitiveFields] or by [WithRedactFields] are stored as
//     [Redacted], and their values, as well as every URL's password, are
//     scrubbed from the stored arguments, result content and error text;
//     a secret recorded in one call is scrubbed from the later rows of its
//     conversation too (a background job's output read later, a typed
//     password printed back: the most recent 64 of each of the 1,024 most
//     recently active conversations, each secret at most 4 KiB), and,
//     with [WithSharedSecrets], from those any Recorder sharing the
//     database and its key writes.
//     The tool's definition is the wrapped resolver's, or, for a call it
//     does not list (a Session's undeclared recipe step), the one told
//     through [llmtoolkit.Listeners].Definition.
//   - Arguments and results are capped ([WithMaxArgumentBytes],
//     [WithMaxResultBytes]) and marked when cut.
//   - The iteration is the agent loop's ([llmtoolkit.Scope].Iteration), else
//     the one given with the conversation.
//   - The row goes to [DefaultTable], to the table named by [WithTable], or
//     to the one [WithTableFrom] picks for the call; a call whose table cannot
//     be chosen is refused before the tool runs, as an unattributed one
//     (with [WithBestEffort]: run, its row dropped, counted and logged).
//
// Writes are synchronous unless [WithAsync] is given. Call [Recorder.Close]
// when done: with WithAsync it flushes the queue.
func Record(r llmtoolkit.Resolver, db *gorm.DB, opts ...Option) *Recorder {
	rec := &Recorder{r: r, cfg: newConfig(opts)}
	rec.subWrap = rec.forSubAgent // one method value, not one per call
	rec.table, rec.tableErr = rec.cfg.staticTable()
	if rec.cfg.sharedSecrets {
		rec.sealer, rec.sealerErr = newSealer(rec.cfg.sharedKey)
	}
	rec.tools = llmtoolkit.NewObservedTools(r, rec)
	if db != nil {
		// One INSERT statement is atomic: gorm's default transaction around
		// it would only cost round trips.
		rec.db = db.Session(&gorm.Session{SkipDefaultTransaction: true, PrepareStmt: true})
		rec.batch = db.Session(&gorm.Session{SkipDefaultTransaction: true, PrepareStmt: true})
		rec.rowsPerInsert = rec.cfg.batchSize
		rec.inserts.skip = rec.cfg.idempotentCalls
		rec.tables.unique = rec.cfg.idempotentCalls
		if db.Dialector.Name() == "sqlite" {
			rec.sqlite = true
			rec.busy.ms.Store(busyUnknown)
			// One statement per default batch: no transaction around
			// several, so no statement journal and one commit (the driver
			// binds in time linear in the parameters since modernc v1.60.1).
			rec.rowsPerInsert = min(rec.rowsPerInsert, sqliteRowsPerInsert)
		}
	}
	if rec.cfg.async {
		rec.queue = make(chan queued, rec.cfg.queueSize)
		rec.done = make(chan struct{})
		go rec.run()
	}
	return rec
}

// Tools lists the wrapped resolver's tools as it lists them now, each with
// the Recorder among its observers. The slice is shared: do not modify it.
func (rec *Recorder) Tools() []llmtoolkit.Tool { return rec.tools.Tools() }

// LookupTool finds a tool of the wrapped resolver as it is now, with the
// Recorder among its observers.
func (rec *Recorder) LookupTool(name string) (llmtoolkit.Tool, bool) {
	return rec.tools.LookupTool(name)
}

// forSubAgent wraps a sub-agent's resolver so that this Recorder records
// its calls, unless a Recorder already observes its tools.
func (rec *Recorder) forSubAgent(r llmtoolkit.Resolver) llmtoolkit.Resolver {
	// A Recorder observes every tool it lists: the first tool tells.
	if tools := r.Tools(); len(tools) > 0 {
		for _, ob := range tools[0].Observers {
			if _, ok := ob.(*Recorder); ok {
				return r
			}
		}
	}
	return &subAgentRecorder{rec: rec, r: r, tools: llmtoolkit.NewObservedTools(r, rec)}
}

// subAgentRecorder is a sub-agent's resolver recorded by its parent's
// Recorder: the same database, table choice, options and counts.
type subAgentRecorder struct {
	rec   *Recorder
	r     llmtoolkit.Resolver
	tools *llmtoolkit.ObservedTools
}

// Tools lists the sub-agent's tools with the Recorder among their observers.
func (s *subAgentRecorder) Tools() []llmtoolkit.Tool { return s.tools.Tools() }

// LookupTool finds one of them.
func (s *subAgentRecorder) LookupTool(name string) (llmtoolkit.Tool, bool) {
	return s.tools.LookupTool(name)
}

// Resolve runs and records a call of the sub-agent; a sub-agent it starts
// is recorded the same way.
func (s *subAgentRecorder) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if content, ok, err := llmtoolkit.ResolveRecipe(ctx, s, call); ok {
		return content, err
	}
	return s.rec.resolve(llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{SubAgent: s.rec.subWrap}), s.r, s.tools, call)
}

// Stats counts what a Recorder did with the calls it saw.
type Stats struct {
	// Recorded is the number of rows written (with [WithAsync]: queued).
	Recorded int64
	// Refused is the number of calls refused before the tool ran because
	// they could not be attributed ([ErrUnattributed]) or their table could
	// not be chosen ([WithTable], [WithTableFrom]).
	Refused int64
	// Dropped is the number of rows not written because the call could not
	// be attributed or its table chosen: with [WithBestEffort], or for a call
	// refused before it reached the Recorder.
	Dropped int64
	// Failed is the number of rows whose write failed (logged and given to
	// [WithOnError]); with [WithAsync], counted when the batch fails.
	Failed int64
	// Duplicates is the number of rows not written because the table
	// already held the completed row of the same call
	// ([WithIdempotentCalls]); each is logged. With [WithAsync] they are
	// counted when their batch is written, after Recorded counted them
	// queued; without, they are not counted in Recorded.
	Duplicates int64
}

// Stats returns the counts so far.
func (rec *Recorder) Stats() Stats {
	return Stats{Recorded: rec.recorded.Load(), Refused: rec.refused.Load(), Dropped: rec.dropped.Load(), Failed: rec.failed.Load(),
		Duplicates: rec.duplicates.Load()}
}

// Resolve runs the call on the wrapped resolver and records it. The
// recorded arguments are a redacted copy: the tool sees the call unchanged.
// A panic of the tool is recorded as an error and then re-panics (Execute
// rescues it).
//
// The call's context carries the Recorder as a sub-agent wrapper
// ([llmtoolkit.Listeners].SubAgent): a sub-agent the call starts
// (agent's spawn_agent) has its calls recorded by this Recorder too, with
// its agent id, unless its resolver is already recorded.
func (rec *Recorder) Resolve(ctx context.Context, call llmtoolkit.Call) (content string, err error) {
	if rec.r == nil {
		return "", fmt.Errorf("%w: %q (trace.Record was given a nil resolver)", llmtoolkit.ErrUnknownTool, call.Name)
	}
	if content, ok, err := llmtoolkit.ResolveRecipe(ctx, rec, call); ok {
		return content, err // a recipe reached by Resolve: one row for it, one per step
	}
	return rec.resolve(llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{SubAgent: rec.subWrap}), rec.r, rec.tools, call)
}

// resolve runs the call on r, whose tools as this Recorder lists them are
// tools, and records it.
func (rec *Recorder) resolve(ctx context.Context, r llmtoolkit.Resolver, tools *llmtoolkit.ObservedTools, call llmtoolkit.Call) (content string, err error) {
	def, known := tools.Seen(call.Name)
	row := rec.begin(ctx, call, def)
	if row.unwritable != nil {
		if !rec.cfg.bestEffort {
			rec.refused.Add(1)
			rec.logUnwritable(ctx, call.Name, row.unwritable, "refused before it ran")
			return "", &refusal{tool: call.Name, err: row.unwritable}
		}
	}
	if err := rec.share(ctx, row); err != nil {
		// The other Recorders could not scrub the secret: the call does
		// not run (with WithBestEffort it does, the failure logged).
		if !rec.cfg.bestEffort {
			rec.refused.Add(1)
			rec.logUnwritable(ctx, call.Name, err, "refused before it ran")
			return "", &refusal{tool: call.Name, err: err}
		}
		rec.logUnwritable(ctx, call.Name, err, "it runs (best effort), its secret unknown to other Recorders")
	}
	var caught func() (llmtoolkit.Tool, bool)
	if !known {
		// A resolver below may know it (a Session's undeclared recipe
		// step): redact by the definition it tells.
		ctx, caught = llmtoolkit.CatchDefinition(ctx, call.Name)
	}
	relearn := func() {
		if caught == nil {
			return
		}
		if t, ok := caught(); ok {
			row.args, row.secrets = rec.arguments(call, t)
		}
	}
	ctx = llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{Parts: row.parts.add, Show: row.cost.shown(ctx)})
	ctx = calltask.WithLater(ctx, rec.later(row))
	start := time.Now()
	finished := false
	defer func() {
		if finished {
			return
		}
		relearn()
		v := recover()
		if v == nil { // runtime.Goexit: nothing to re-panic
			rec.finish(ctx, row, "", errors.New("the tool did not return (runtime.Goexit)"), time.Since(start))
			return
		}
		rec.finish(ctx, row, "", fmt.Errorf("panic: %v", v), time.Since(start))
		panic(v)
	}()
	content, err = r.Resolve(ctx, call)
	finished = true
	relearn()
	if werr := rec.finish(ctx, row, content, err, time.Since(start)); werr != nil && rec.cfg.strict {
		werr = fmt.Errorf("trace: the call to %q ran but could not be recorded: %w", call.Name, werr)
		if err != nil {
			return content, errors.Join(err, werr)
		}
		return "", werr
	}
	return content, err
}

// refusal is the error of a call a Recorder refused before it ran. Its
// text is for the host: what is wrong and how to fix it. The model reads
// its ModelMessage ([llmtoolkit.ModelMessenger]): the call was not run, in
// general terms, since it cannot fix the host's configuration.
type refusal struct {
	tool string
	err  error
}

// Error says why the call was refused and what the host should do.
func (r *refusal) Error() string {
	return fmt.Sprintf("trace: not calling %q: %v", r.tool, r.err)
}

// ModelMessage is what the model reads.
func (r *refusal) ModelMessage() string {
	return fmt.Sprintf("%q was not run: the call could not be recorded in the audit trail, which this host requires (a problem in the host's configuration, not in the arguments; the host's log says more)", r.tool)
}

// Unwrap returns the reason.
func (r *refusal) Unwrap() error { return r.err }

// ObserveCall records a call that [llmtoolkit.Execute] answered without
// resolving it: a call refused before it ran, or a recipe call (its row's
// ID is the [llmtoolkit.RecipeRun.ID] its steps' rows carry as ParentID).
// It implements [llmtoolkit.Observer].
func (rec *Recorder) ObserveCall(ctx context.Context, o llmtoolkit.Observation) {
	row := rec.begin(ctx, o.Call, o.Tool)
	if o.Kind == llmtoolkit.ObservedRecipe {
		row.id = o.RunID
		// The recipe's content is made of its steps' results: scrub their
		// secrets too.
		row.secrets = append(row.secrets, rec.runs.take(o.RunID)...)
	}
	var err error
	if o.Result.IsError {
		err = errors.New(o.Result.Content)
	}
	row.parts.add(o.Result.Parts)
	if o.Result.Display != nil {
		row.cost.note(*o.Result.Display)
	}
	_ = rec.finish(ctx, row, o.Result.Content, err, o.Duration)
}

// pending is a row being built for one call.
type pending struct {
	id, tool, parent string
	agent, callID    string
	conv             conversation
	fe               []FieldError
	table            *table // rec.table unless WithTableFrom picked another
	unwritable       error  // why the row cannot be written (unattributed, no table), or nil
	args             JSON
	secrets          []string
	parts            *partDigests // what the tool attached: digests, never bytes
	cost             *shownCost   // what the call reported it spent, if it did
	paths            []string     // the canonical paths the call names (Tool.Paths), each once
	shared           []string     // the secrets kept in the shared table (WithSharedSecrets)
}

// begin attributes a call, chooses its table and redacts its arguments.
func (rec *Recorder) begin(ctx context.Context, call llmtoolkit.Call, def llmtoolkit.Tool) *pending {
	p := &pending{tool: call.Name, callID: call.ID, parts: &partDigests{}, cost: &shownCost{}, paths: callPaths(ctx, call, def)}
	p.conv, p.fe = conversationFrom(ctx)
	if p.conv.tenantID == "" && p.conv.conversationID == "" && len(p.fe) == 0 && rec.cfg.defaultTenant != "" {
		p.conv.tenantID, p.conv.conversationID = rec.cfg.defaultTenant, rec.cfg.defaultConversation
	}
	if n, ok := llmtoolkit.ScopeFrom(ctx).Iteration, llmtoolkit.ScopeFrom(ctx).Iteration > 0; ok {
		p.conv.iteration = n // the loop's count wins
	}
	if run, ok := llmtoolkit.RecipeRunFrom(ctx); ok {
		p.parent = run.ID
	}
	p.agent = llmtoolkit.ScopeFrom(ctx).AgentID
	if rec.sealerErr != nil {
		p.unwritable = rec.sealerErr
	} else if err := checkConversation(p.conv, p.fe); err != nil {
		p.unwritable = fmt.Errorf("%w (%w); bind them with trace.WithConversation or the session map (tenant_id, conversation_id), give trace.WithDefaultConversation to trace.Record, or opt into trace.WithBestEffort", ErrUnattributed, err)
	} else if rec.cfg.tableFrom == nil && rec.tableErr == nil {
		p.table = &rec.table
	} else if t, err := rec.cfg.chooseTable(ctx, rec.table, rec.tableErr); err != nil {
		p.unwritable = err
	} else {
		p.table = &t
	}
	if p.table != nil {
		if err := rec.tables.check(ctx, rec.db, *p.table); err != nil {
			p.table, p.unwritable = nil, err
		}
	}
	p.args, p.secrets = rec.arguments(call, def)
	return p
}

// finish writes the row of a call that ended, or counts it as dropped.
func (rec *Recorder) finish(ctx context.Context, p *pending, content string, err error, elapsed time.Duration) error {
	if p.unwritable != nil {
		rec.dropped.Add(1)
		rec.logUnwritable(ctx, p.tool, p.unwritable, "its row was dropped")
		return nil
	}
	if p.parent != "" {
		rec.runs.note(p.parent, p.secrets)
	}
	// A secret given in an earlier call of the conversation is scrubbed
	// here too: a job's output read later may print it.
	// A value typed with its Enter (write_stdin's chars) is printed back
	// without it: its trimmed form is a secret too.
	key := convKey{p.conv.tenantID, p.conv.conversationID}
	secrets := withTrimmed(p.secrets)
	earlier := rec.convs.seen(key)
	// With WithSharedSecrets, those the other Recorders kept too, and
	// this row's secrets kept for them (those learned after the call began).
	serr := rec.share(ctx, p)
	if shared, err := rec.sharedSeen(ctx, p); err != nil {
		serr = errors.Join(serr, err)
	} else {
		for _, s := range shared {
			if !slices.Contains(earlier, s) {
				earlier = append(earlier, s)
			}
		}
	}
	if len(earlier) > 0 {
		redact.ScrubJSON(map[string]any(p.args), earlier, Redacted)
		secrets = append(slices.Clip(secrets), earlier...)
	}
	rec.convs.note(key, withTrimmed(p.secrets))
	res, typ := rec.result(content, err, secrets)
	p.parts.put(res)
	putPaths(res, p.paths, secrets)
	t, berr := buildJSON(Attrs{
		ID: p.id, TenantID: p.conv.tenantID, ConversationID: p.conv.conversationID, ToolName: p.tool,
		ResultType: typ, DurationMS: elapsed.Milliseconds(), Iteration: p.conv.iteration, ParentID: p.parent,
		AgentID: p.agent, CallID: p.callID, CostUSD: p.cost.usd(), UnpricedCalls: p.cost.unpricedCalls(),
	}, p.args, stripNULs(res), p.fe)
	if berr == nil {
		// Encoded here, on the caller's goroutine: the async writer, the
		// bottleneck, then only binds text.
		berr = t.encode()
	}
	if berr == nil && serr != nil {
		berr = serr // the row may hold a secret it was not told of: not written
	}
	dup := false
	if berr == nil {
		dup, berr = rec.write(ctx, *p.table, t)
	}
	if berr != nil {
		rec.fail(ctx, t, berr)
		return berr
	}
	if !dup {
		rec.recorded.Add(1)
	}
	return nil
}

// later returns where the background work of the call of p reports what
// happens after the call returned (calltask.WithLater: codetools' jobs,
// at their end): a row of its own, named by the event's kind ("job_end"),
// attributed as the call is (tenant, conversation, agent, call id,
// iteration, table), its arguments the job's id and the tool that
// started it, scrubbed of the call's and its conversation's secrets.
func (rec *Recorder) later(p *pending) func(calltask.Event) {
	call := *p // as it is now: the event may come while the call still runs
	return func(e calltask.Event) {
		ev := &pending{tool: e.Kind, agent: call.agent, callID: call.callID, conv: call.conv, fe: call.fe, table: call.table,
			unwritable: call.unwritable, secrets: call.secrets, shared: call.shared, parts: &partDigests{}, cost: &shownCost{},
			args: JSON{"job_id": float64(e.JobID), "started_by": call.tool}}
		var err error
		if e.IsError {
			err = errors.New(e.Content)
		}
		_ = rec.finish(context.Background(), ev, e.Content, err, 0)
	}
}

// logUnwritable logs a call whose row cannot be written.
func (rec *Recorder) logUnwritable(ctx context.Context, tool string, err error, what string) {
	msg := "trace: a tool call could not be attributed; "
	switch {
	case errors.Is(err, ErrSharedSecrets):
		msg = "trace: the secrets of a tool call could not be shared (trace.WithSharedSecrets); "
	case errors.Is(err, ErrNoTable):
		msg = "trace: the table of a tool call does not exist or is not migrated for its options; "
	case !errors.Is(err, ErrUnattributed):
		msg = "trace: the table of a tool call could not be chosen; "
	}
	rec.cfg.logger.LogAttrs(ctx, slog.LevelWarn, msg+what, slog.String("tool", tool), slog.Any("error", err))
}

// checkConversation reports missing or malformed IDs, as [New] would, without
// allocating when they are fine.
func checkConversation(c conversation, fe []FieldError) error {
	if msg := checkUUID(c.tenantID); msg != "" {
		fe = append(fe, FieldError{"tenant_id", msg})
	}
	if msg := checkUUID(c.conversationID); msg != "" {
		fe = append(fe, FieldError{"conversation_id", msg})
	}
	if c.iteration < 0 {
		fe = append(fe, FieldError{"iteration", fmt.Sprintf("must not be negative (got %d)", c.iteration)})
	}
	if fe == nil {
		return nil
	}
	slices.SortStableFunc(fe, func(x, y FieldError) int { return columnOrder[x.Field] - columnOrder[y.Field] })
	return &ValidationError{Fields: fe}
}

// result builds the Result column and the result type, scrubbed of secrets
// and capped.
func (rec *Recorder) result(content string, err error, secrets []string) (JSON, string) {
	res := JSON{}
	typ := ResultOK
	if err != nil {
		typ = ResultError
		rec.put(res, "error", scrub(err.Error(), secrets))
		if content != "" && content != err.Error() {
			rec.put(res, "content", scrub(content, secrets))
		}
	} else {
		rec.put(res, "content", scrub(content, secrets))
	}
	return res, typ
}

// put stores s under key, cut to the cap and marked when longer.
func (rec *Recorder) put(res JSON, key, s string) {
	kept, cutOff := cut(s, rec.cfg.maxResultBytes)
	res[key] = kept
	if cutOff {
		res["truncated"] = true
		res[key+"_bytes"] = float64(len(s)) // as JSON gives it back
	}
}

// stripNULs makes a result built from strings fit for jsonb.
func stripNULs(res JSON) JSON {
	for k, v := range res {
		if s, ok := v.(string); ok && strings.IndexByte(s, 0) >= 0 { // rare: no copy, no box otherwise
			res[k] = stripNUL(s)
		}
	}
	return res
}

// write inserts t into tbl now, or queues it for the async writer; dup
// reports a row inserted now that the table already held
// ([WithIdempotentCalls]).
func (rec *Recorder) write(ctx context.Context, tbl table, t *Trace) (dup bool, err error) {
	if rec.queue != nil {
		rec.mu.RLock()
		if !rec.closed {
			rec.queue <- queued{t, tbl} // waits while the queue is full: never drops
			rec.mu.RUnlock()
			return false, nil
		}
		rec.mu.RUnlock()
	}
	ctx = context.WithoutCancel(ctx)
	if rec.sqliteBounded(ctx) {
		return rec.insertWithin(ctx, tbl, t)
	}
	return rec.insert(ctx, tbl, t)
}

// insert writes one trace into tbl now, within the write timeout; dup
// reports a row the table already held ([WithIdempotentCalls]), counted and
// logged.
func (rec *Recorder) insert(ctx context.Context, tbl table, t *Trace) (dup bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, rec.cfg.writeTimeout)
	defer cancel()
	return rec.insertWithin(ctx, tbl, t)
}

// insertWithin writes one trace into tbl now, bounded by ctx (or, for a
// context that never ends, by the database: sqliteBounded).
func (rec *Recorder) insertWithin(ctx context.Context, tbl table, t *Trace) (dup bool, err error) {
	if rec.db == nil {
		return false, errors.New("trace: cannot write the trace: trace.Record was given a nil *gorm.DB")
	}
	var skipped int
	err = dbGuarded(rec.db, func() (err error) {
		skipped, err = rec.inserts.exec(ctx, rec.db, tbl, []*Trace{t})
		return err
	})
	if err != nil {
		return false, fmt.Errorf("trace: writing the trace of %q to %s: %w", t.ToolName, tbl, err)
	}
	if skipped > 0 {
		rec.skipped(ctx, tbl, skipped, t)
	}
	return skipped > 0, nil
}

// skipped counts and logs n rows the table already held (one of them t,
// when known).
func (rec *Recorder) skipped(ctx context.Context, tbl table, n int, t *Trace) {
	rec.duplicates.Add(int64(n))
	attrs := []slog.Attr{slog.String("table", tbl.String()), slog.Int("rows", n)}
	if t != nil {
		attrs = append(attrs, slog.String("tool", t.ToolName), slog.String("trace_id", t.ID))
		if t.CallID != nil {
			attrs = append(attrs, slog.String("call_id", *t.CallID))
		}
	}
	rec.cfg.logger.LogAttrs(ctx, slog.LevelWarn,
		"trace: the completed row of a call was already recorded (a retry): this one was not written", attrs...)
}

// dbGuarded runs a database call on db, turning a panic in it (a
// driver's, a gorm callback's) into an error: the rows count as failed
// writes, each reported once, and the caller goes on. After a panic it
// forgets db's prepared statements: gorm keeps a statement whose
// preparation panicked as if it were prepared, and every later use of it
// would fail.
func dbGuarded(db *gorm.DB, fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = fmt.Errorf("the database call panicked: %v", v)
			forgetStatements(db)
		}
	}()
	return fn()
}

// forgetStatements clears the prepared statements of db's pool, if it has
// gorm's.
func forgetStatements(db *gorm.DB) {
	if db == nil {
		return
	}
	defer func() { _ = recover() }() // a pool broken past clearing: the next write reports it
	switch p := db.Statement.ConnPool.(type) {
	case *gorm.PreparedStmtDB:
		p.Reset()
	case *gorm.PreparedStmtTX:
		p.PreparedStmtDB.Reset()
	}
}

// report logs a failed write and tells WithOnError.
func (rec *Recorder) report(ctx context.Context, t *Trace, err error) {
	attrs := []slog.Attr{slog.Any("error", err)}
	if t != nil {
		attrs = append(attrs, slog.String("tool", t.ToolName), slog.String("trace_id", t.ID),
			slog.String("tenant_id", t.TenantID), slog.String("conversation_id", t.ConversationID))
	}
	rec.cfg.logger.LogAttrs(ctx, slog.LevelError, "trace: a tool call could not be recorded", attrs...)
	if rec.cfg.onError == nil {
		return
	}
	defer func() { // WithOnError is the host's code: its panic is logged, not spread
		if v := recover(); v != nil {
			rec.cfg.logger.LogAttrs(ctx, slog.LevelError, "trace: WithOnError panicked",
				slog.Any("panic", v), slog.String("stack", string(debug.Stack())))
		}
	}()
	rec.cfg.onError(t, err)
}

// maxRuns bounds how many recipe runs' step secrets are kept waiting for
// their parent's row (a parent this Recorder never sees would otherwise
// leave its entry forever).
const maxRuns = 1024

// runSecrets keeps the secret values of recipe steps by run ID, until the
// recipe call's own row is written.
type runSecrets struct {
	mu    sync.Mutex
	byRun map[string][]string
	order []string // run IDs, oldest first
}

// note adds a step's secrets to its run.
func (r *runSecrets) note(run string, secrets []string) {
	if len(secrets) == 0 {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byRun == nil {
		r.byRun = map[string][]string{}
	}
	if _, known := r.byRun[run]; !known {
		if len(r.order) >= maxRuns {
			delete(r.byRun, r.order[0])
			r.order = r.order[1:]
		}
		r.order = append(r.order, run)
	}
	r.byRun[run] = append(r.byRun[run], secrets...)
}

// take returns and forgets a run's secrets.
func (r *runSecrets) take(run string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	secrets, ok := r.byRun[run]
	if !ok {
		return nil
	}
	delete(r.byRun, run)
	if i := slices.Index(r.order, run); i >= 0 {
		r.order = slices.Delete(r.order, i, i+1)
	}
	return secrets
}

// Bounds of a row's "paths".
const (
	maxRowPaths     = 200  // paths kept; the others are counted
	maxRowPathBytes = 1024 // bytes kept of one path
)

// callPaths returns the canonical paths call names, as its tool declares
// them (llmtoolkit.Tool.Paths: the files a patch touches, the real path
// of a memory's /memories/x), each once, in the order named; none when
// the tool would refuse one (the call is refused: its error says which).
func callPaths(ctx context.Context, call llmtoolkit.Call, def llmtoolkit.Tool) []string {
	if def.Paths == nil || call.Malformed != nil {
		return nil
	}
	named, err := def.Paths.Resolve(ctx, call.Arguments)
	if err != nil {
		return nil
	}
	var out []string
	for _, p := range named {
		if !slices.Contains(out, p.Path) {
			out = append(out, p.Path)
		}
	}
	return out
}

// putPaths stores paths under "paths", capped and scrubbed; "paths_omitted"
// counts those left out.
func putPaths(res JSON, paths []string, secrets []string) {
	if len(paths) == 0 {
		return
	}
	kept := make([]any, 0, min(len(paths), maxRowPaths))
	for _, p := range paths[:min(len(paths), maxRowPaths)] {
		kept = append(kept, stripNUL(textutil.CutUTF8(scrub(p, secrets), maxRowPathBytes)))
	}
	res["paths"] = kept
	if n := len(paths) - len(kept); n > 0 {
		res["paths_omitted"] = float64(n)
	}
}
