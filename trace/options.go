package trace

import (
	"context"
	"log/slog"
	"time"
)

// Option configures a [Recorder].
type Option func(*config)

type config struct {
	fields              []string
	maxResultBytes      int
	maxArgumentBytes    int
	bestEffort          bool
	defaultTenant       string
	defaultConversation string
	onError             func(t *Trace, err error)
	strict              bool
	async               bool
	queueSize           int
	batchSize           int
	flushInterval       time.Duration
	writeTimeout        time.Duration
	logger              *slog.Logger
	table               string // named by WithTable
	tableNamed          bool   // WithTable was given
	tableFrom           func(context.Context) (string, error)
	idempotentCalls     bool   // see WithIdempotentCalls
	sharedSecrets       bool   // WithSharedSecrets was given
	sharedKey           []byte // its key
}

// Defaults of the [WithAsync] writer and of writes.
const (
	DefaultQueueSize     = 4096
	DefaultBatchSize     = 500
	DefaultFlushInterval = 20 * time.Millisecond
	DefaultWriteTimeout  = 10 * time.Second
)

func newConfig(opts []Option) config {
	c := config{
		maxResultBytes:   DefaultMaxResultBytes,
		maxArgumentBytes: DefaultMaxArgumentBytes,
		queueSize:        DefaultQueueSize,
		batchSize:        DefaultBatchSize,
		flushInterval:    DefaultFlushInterval,
		writeTimeout:     DefaultWriteTimeout,
	}
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c
}

// WithRedactFields names argument fields redacted for every tool, in addition
// to each tool's own [llmtoolkit.Tool.SensitiveFields], with the same rules:
// a plain name matches that key at any depth, a dotted name that exact path
// (arrays passed through), both without regard to case. Their values are
// also scrubbed from the stored result and error text.
func WithRedactFields(names ...string) Option {
	return func(c *config) { c.fields = append(c.fields, names...) }
}

// WithMaxResultBytes caps the bytes of a result's content (and of an error
// message) that are stored; longer ones are cut and marked (see the package
// doc). n <= 0 keeps the default, [DefaultMaxResultBytes].
func WithMaxResultBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxResultBytes = n
		}
	}
}

// WithMaxArgumentBytes caps the stored arguments of a call at n bytes of JSON
// (default [DefaultMaxArgumentBytes]); larger ones are cut and marked with
// "_truncated": true and "_bytes" (see the package doc). n <= 0 keeps the
// default.
func WithMaxArgumentBytes(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxArgumentBytes = n
		}
	}
}

// WithBestEffort lets a call that cannot be attributed to a tenant and a
// conversation run: its row is dropped, counted in [Recorder.Stats] and
// logged. Without it, such a call is refused before the tool runs with an
// error wrapping [ErrUnattributed].
func WithBestEffort() Option {
	return func(c *config) { c.bestEffort = true }
}

// WithDefaultConversation attributes the calls whose context names neither a
// tenant nor a conversation (no [WithConversation], no session IDs) to
// these IDs (UUIDs), for hosts with a single tenant or a command line.
func WithDefaultConversation(tenantID, conversationID string) Option {
	return func(c *config) { c.defaultTenant, c.defaultConversation = tenantID, conversationID }
}

// WithIdempotentCalls records each completed call once: a call that
// succeeded has at most one row with result type [ResultOK] per tenant,
// conversation, agent, iteration, call ID and tool, however often it ran.
// Give it to [Migrate], which adds the unique index that says so
// (TABLE_call_id_unique: on tenant_id, conversation_id, agent_id,
// iteration, call_id and tool_name, for the rows whose call_id is set
// and whose result type is ok; it fails when the table already holds
// such duplicates), and to [Record], whose inserts then skip a row the index
// already holds (ON CONFLICT DO NOTHING, on SQLite and PostgreSQL): the
// row skipped is counted in [Stats].Duplicates and logged, never silent.
// A Recorder given it refuses the calls of a table without the index
// before they run ([ErrNoTable]).
//
// It is for retries: a call whose answer was lost (its process died after
// writing its row, a replica behind a load balancer was killed) runs
// again with the same call ID, and the audit keeps one row per completed
// call. Failed attempts keep a row each (result type [ResultError]); a
// call without an ID ([llmtoolkit.Call.ID] empty) is never deduplicated.
// The call ID must therefore name one call within its conversation and
// iteration, and stay the same across its retries: provider call IDs do
// within one answer (agentloop gives each iteration its number); over MCP,
// mcp.NewServer takes the call's ID from the request's _meta
// (mcp.CallIDMetaKey, which mcp's Client fills with
// [llmtoolkit.IdempotencyKey]), since the JSON-RPC request id changes on
// each retry, and binds it to the call's arguments (a digest of them
// after a "#"), so that a client reusing an ID for another call leaves a
// row for each. Do not give it to a Recorder whose calls reuse an ID in one
// conversation and iteration for distinct calls (several runs in one
// conversation whose provider makes IDs up): their later rows would be
// skipped. The ID is the caller's word: a caller that gives a new call
// of the same tool the ID of one that succeeded runs it without a new
// row (each such row is counted and logged, with its trace ID and call
// ID).
func WithIdempotentCalls() Option {
	return func(c *config) { c.idempotentCalls = true }
}

// WithOnError sets a function told of every trace that could not be written,
// after the failure is logged. It may be called from several goroutines at
// once, and, with [WithAsync], from the writer goroutine. The trace may be the
// invalid one that was refused.
func WithOnError(fn func(t *Trace, err error)) Option {
	return func(c *config) { c.onError = fn }
}

// WithStrict makes a failed write fail the tool call: the call's error then
// wraps the write's error. (A call that cannot be attributed is refused
// before the tool runs with or without WithStrict, unless [WithBestEffort].) Failures of
// [WithAsync] batch writes happen after the call has returned: they are logged,
// given to [WithOnError] and reported by [Recorder.Close].
func WithStrict() Option {
	return func(c *config) { c.strict = true }
}

// WithAsync makes writes asynchronous: traces go through a bounded queue to a
// goroutine that inserts them in batches. A call waits when the queue is
// full (back-pressure: nothing is ever dropped), and [Recorder.Close]
// flushes the queue and stops the goroutine. Tune it with [WithQueueSize],
// [WithBatchSize] and [WithFlushInterval].
func WithAsync() Option {
	return func(c *config) { c.async = true }
}

// WithQueueSize sets how many traces the [WithAsync] queue holds before calls wait
// (default [DefaultQueueSize]); n <= 0 keeps the default.
func WithQueueSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.queueSize = n
		}
	}
}

// WithBatchSize sets the most traces the [WithAsync] writer inserts in one
// statement (default [DefaultBatchSize]); n <= 0 keeps the default.
func WithBatchSize(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.batchSize = n
		}
	}
}

// WithFlushInterval sets how long the [WithAsync] writer waits for a batch to fill
// before inserting what it has (default [DefaultFlushInterval]); d <= 0
// keeps the default.
func WithFlushInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.flushInterval = d
		}
	}
}

// WithWriteTimeout bounds each insert (default [DefaultWriteTimeout]); d <= 0
// keeps the default. With [WithAsync] it bounds each batch as a whole, the
// row-by-row retry of a failed batch included, so that [Recorder.Close]
// with a hung database takes about one timeout per batch. Writes do not stop when the call's context is
// cancelled: the trace of a cancelled call is still written. On SQLite, a
// synchronous insert that the database already bounds by d (a pool of
// unlimited size, whose busy timeout, read once, is at most d: OpenSQLite's
// 10 s) is left to that bound, without a context that ends: the driver
// would start a goroutine per statement to watch it.
func WithWriteTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.writeTimeout = d
		}
	}
}

// WithLogger sets the logger of write failures (default slog.Default()).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}
