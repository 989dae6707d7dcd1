package trace

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"gorm.io/gorm"
)

// Recorder is a [llmtoolkit.Resolver] that records every call of the
// resolver it wraps as one [Trace]. Build it with [Record]. It lists the
// same tools and forwards the optional capabilities of the wrapped resolver
// ([llmtoolkit.ToolLookup], [llmtoolkit.RecipeProvider],
// [SensitiveFieldsProvider]); the calls of a recipe's plan come back through
// Resolve and are recorded one by one. It is safe for concurrent use.
type Recorder struct {
	r             llmtoolkit.Resolver
	db            *gorm.DB // single inserts: prepared statement, no transaction
	batch         *gorm.DB // batch inserts
	rowsPerInsert int
	cfg           config
	fields        map[string]struct{} // from RedactFields

	// Async writer.
	mu     sync.RWMutex // held for reading while enqueueing, for writing by Close
	closed bool
	queue  chan *Trace
	done   chan struct{}

	failMu   sync.Mutex
	failures int   // async writes lost
	firstErr error // the first of them
}

// Record wraps r so that each Resolve is timed and written to db as one
// trace (call [Migrate] on db first). The conversation's IDs come from the
// context: [WithConversation], else the session map's tenant_id,
// conversation_id and iteration keys. Argument fields named by r's
// SensitiveFieldsFor or by [RedactFields] are stored as "[REDACTED]", and
// results longer than [MaxResultBytes] are cut and marked.
//
// Writes are synchronous unless [Async] is given. A failed write is logged
// and given to [OnError] but does not fail the call, unless [Strict] is
// given. Call [Recorder.Close] when done: with Async it flushes the queue.
//
// Record returns the concrete *Recorder rather than a bare Resolver so that
// Close is reachable.
func Record(r llmtoolkit.Resolver, db *gorm.DB, opts ...Option) *Recorder {
	rec := &Recorder{r: r, cfg: newConfig(opts)}
	rec.fields = fieldSet(rec.cfg.fields)
	if db != nil {
		// One INSERT statement is atomic: gorm's default transaction around
		// it would only cost round trips.
		rec.db = db.Session(&gorm.Session{SkipDefaultTransaction: true, PrepareStmt: true})
		rec.batch = db.Session(&gorm.Session{SkipDefaultTransaction: true, PrepareStmt: true})
		rec.rowsPerInsert = rec.cfg.batchSize
		if db.Dialector.Name() == "sqlite" {
			// The pure-Go driver binds parameters in time quadratic in their
			// number: statements of 100 rows in one transaction are faster
			// than one statement of 500.
			rec.rowsPerInsert = min(rec.rowsPerInsert, sqliteRowsPerInsert)
		}
	}
	if rec.cfg.async {
		rec.queue = make(chan *Trace, rec.cfg.queueSize)
		rec.done = make(chan struct{})
		go rec.run()
	}
	return rec
}

// Tools lists the wrapped resolver's tools.
func (rec *Recorder) Tools() []llmtoolkit.Tool {
	if rec.r == nil {
		return nil
	}
	return rec.r.Tools()
}

// LookupTool finds a tool of the wrapped resolver, through its own
// LookupTool when it has one.
func (rec *Recorder) LookupTool(name string) (llmtoolkit.Tool, bool) {
	if l, ok := rec.r.(llmtoolkit.ToolLookup); ok {
		return l.LookupTool(name)
	}
	for _, t := range rec.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return llmtoolkit.Tool{}, false
}

// DispatchRecipe forwards to the wrapped resolver when it is a
// [llmtoolkit.RecipeProvider]; otherwise it returns nil.
func (rec *Recorder) DispatchRecipe(tool string) llmtoolkit.Recipe {
	if rp, ok := rec.r.(llmtoolkit.RecipeProvider); ok {
		return rp.DispatchRecipe(tool)
	}
	return nil
}

// SensitiveFieldsFor returns the fields redacted for tool: the wrapped
// resolver's and those given with [RedactFields].
func (rec *Recorder) SensitiveFieldsFor(tool string) []string {
	var out []string
	if sp, ok := rec.r.(SensitiveFieldsProvider); ok {
		out = append(out, sp.SensitiveFieldsFor(tool)...)
	}
	return append(out, rec.cfg.fields...)
}

// Resolve runs the call on the wrapped resolver and records it. The
// recorded arguments are a redacted copy: the tool sees the call unchanged.
// A panic of the tool is recorded as an error and then re-panics.
func (rec *Recorder) Resolve(ctx context.Context, call llmtoolkit.Call) (content string, err error) {
	if rec.r == nil {
		return "", fmt.Errorf("%w: %q (trace.Record was given a nil resolver)", llmtoolkit.ErrUnknownTool, call.Name)
	}
	conv, fe := conversationFrom(ctx)
	if rec.cfg.strict {
		if err := checkConversation(conv, fe); err != nil {
			return "", fmt.Errorf("trace: not calling %q, since it could not be recorded: %w", call.Name, err)
		}
	}
	args := rec.arguments(call)

	start := time.Now()
	finished := false
	defer func() {
		if finished {
			return
		}
		v := recover()
		if v == nil { // runtime.Goexit: nothing to re-panic
			rec.save(ctx, call.Name, conv, fe, args, JSON{"error": "the tool did not return (runtime.Goexit)"}, ResultError, time.Since(start))
			return
		}
		rec.save(ctx, call.Name, conv, fe, args, JSON{"error": fmt.Sprintf("panic: %v", v)}, ResultError, time.Since(start))
		panic(v)
	}()
	content, err = rec.r.Resolve(ctx, call)
	finished = true
	elapsed := time.Since(start)

	res, typ := rec.result(content, err)
	if werr := rec.save(ctx, call.Name, conv, fe, args, res, typ, elapsed); werr != nil && rec.cfg.strict {
		werr = fmt.Errorf("trace: the call to %q ran but could not be recorded: %w", call.Name, werr)
		if err != nil {
			return content, errors.Join(err, werr)
		}
		return "", werr
	}
	return content, err
}

// checkConversation reports missing or malformed IDs before a strict call.
func checkConversation(c conversation, fe []FieldError) error {
	_, err := buildJSON(Attrs{TenantID: c.tenantID, ConversationID: c.conversationID, ToolName: "-",
		ResultType: ResultOK, Iteration: c.iteration}, nil, nil, fe)
	return err
}

// arguments returns the redacted JSON copy of the call's arguments.
func (rec *Recorder) arguments(call llmtoolkit.Call) JSON {
	args, err := normalize(call.Arguments)
	if err != nil {
		return JSON{"_error": "the arguments could not be encoded as JSON: " + err.Error()}
	}
	fields := rec.fields
	if sp, ok := rec.r.(SensitiveFieldsProvider); ok {
		if own := sp.SensitiveFieldsFor(call.Name); len(own) > 0 {
			fields = fieldSet(own, rec.cfg.fields)
		}
	}
	if fields != nil {
		redact(args, fields)
	}
	return args
}

// result builds the Result column and the result type.
func (rec *Recorder) result(content string, err error) (JSON, string) {
	res := JSON{}
	typ := ResultOK
	if err != nil {
		typ = ResultError
		rec.put(res, "error", err.Error())
		if content != "" {
			rec.put(res, "content", content)
		}
	} else {
		rec.put(res, "content", content)
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

// save builds the trace and writes it (or queues it), reporting failures.
func (rec *Recorder) save(ctx context.Context, tool string, conv conversation, fe []FieldError,
	args, res JSON, typ string, elapsed time.Duration) error {
	t, err := buildJSON(Attrs{
		TenantID: conv.tenantID, ConversationID: conv.conversationID, ToolName: tool,
		ResultType: typ, DurationMS: elapsed.Milliseconds(), Iteration: conv.iteration,
	}, args, stripNULs(res), fe)
	if err == nil {
		err = rec.write(ctx, t)
	}
	if err != nil {
		rec.report(ctx, t, err)
	}
	return err
}

// stripNULs makes a result built from strings fit for jsonb.
func stripNULs(res JSON) JSON {
	for k, v := range res {
		if s, ok := v.(string); ok {
			res[k] = stripNUL(s)
		}
	}
	return res
}

// write inserts t now, or queues it for the async writer.
func (rec *Recorder) write(ctx context.Context, t *Trace) error {
	if rec.queue != nil {
		rec.mu.RLock()
		if !rec.closed {
			rec.queue <- t // waits while the queue is full: never drops
			rec.mu.RUnlock()
			return nil
		}
		rec.mu.RUnlock()
	}
	return rec.insert(context.WithoutCancel(ctx), t)
}

// insert writes one trace now.
func (rec *Recorder) insert(ctx context.Context, t *Trace) error {
	if rec.db == nil {
		return errors.New("trace: cannot write the trace: trace.Record was given a nil *gorm.DB")
	}
	ctx, cancel := context.WithTimeout(ctx, rec.cfg.writeTimeout)
	defer cancel()
	if err := rec.db.WithContext(ctx).Create(t).Error; err != nil {
		return fmt.Errorf("trace: writing the trace of %q: %w", t.ToolName, err)
	}
	return nil
}

// report logs a failed write and tells OnError.
func (rec *Recorder) report(ctx context.Context, t *Trace, err error) {
	rec.cfg.logger.LogAttrs(ctx, slog.LevelError, "trace: a tool call could not be recorded",
		slog.String("tool", t.ToolName), slog.String("trace_id", t.ID),
		slog.String("tenant_id", t.TenantID), slog.String("conversation_id", t.ConversationID),
		slog.Any("error", err))
	if rec.cfg.onError != nil {
		rec.cfg.onError(t, err)
	}
}
