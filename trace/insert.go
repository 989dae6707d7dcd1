package trace

import (
	"context"
	"database/sql"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"gorm.io/gorm"
)

// The hot path of a Recorder's writes. A row a Recorder builds is already
// validated and canonical (buildJSON), so it goes to the database through
// gorm's own connection pool (the session's prepared-statement pool,
// Statement.ConnPool) with an INSERT statement made once per table and row
// count, instead of through gorm's Create: no reflection over the model, no
// statement built per call, no second validation in BeforeCreate. The
// values are the same Go values Create would bind, in the same column
// order, so each row is the same byte for byte (TestFastInsertIsCreate).
// Gorm callbacks registered on Create do not see these inserts; the
// database's insert-only triggers and the model's update and delete hooks
// are unaffected.

// insertColumns are a row's columns, in the order of rowValues.
const insertColumns = " (id, tenant_id, conversation_id, tool_name, arguments, result, result_type, duration_ms, iteration, inserted_at, parent_id, agent_id, call_id, cost_usd, unpriced_calls) VALUES "

// columnsPerRow is the number of columns in insertColumns.
const columnsPerRow = 15

// rowValues appends t's values to args, in insertColumns' order. Each is
// already the driver.Value database/sql's default converter would make of
// the field (a nil pointer is nil, a set one its value, an int an int64),
// so database/sql binds them without reflection; drivers that take any
// value (pgx) bind the same values.
func rowValues(args []any, t *Trace) []any {
	var a, r any = t.Arguments, t.Result
	if t.argumentsText != "" { // encoded by the Recorder: the same text
		a, r = t.argumentsText, t.resultText
	}
	return append(args, t.ID, t.TenantID, t.ConversationID, t.ToolName, a, r,
		t.ResultType, t.DurationMS, int64(t.Iteration), t.InsertedAt, optional(t.ParentID), optional(t.AgentID),
		optional(t.CallID), optional(t.CostUSD), optionalInt(t.UnpricedCalls))
}

// optional is the driver value of a nullable column: nil, or the value.
func optional[T string | float64](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// optionalInt is the driver value of a nullable integer column.
func optionalInt(p *int) any {
	if p == nil {
		return nil
	}
	return int64(*p)
}

// insertKey names one INSERT statement: its table and its number of rows.
type insertKey struct {
	t    table
	rows int
}

// inserts caches the INSERT statements of a Recorder: their text, and
// for batches their prepared form on the database.
type inserts struct {
	m        sync.Map // insertKey -> string
	prepared sync.Map // insertKey -> *sql.Stmt, prepared on the *sql.DB
	kept     atomic.Int64
	// skip makes each INSERT skip the rows a unique index already holds
	// (ON CONFLICT DO NOTHING): WithIdempotentCalls.
	skip bool
}

// maxPrepared bounds the batch statements a Recorder keeps prepared (two
// per table at most: a host with more tenant tables than this prepares the
// others for each batch).
const maxPrepared = 512

// statement returns the INSERT of rows rows into t, for db's dialect.
func (c *inserts) statement(db *gorm.DB, t table, rows int) string {
	k := insertKey{t, rows}
	if s, ok := c.m.Load(k); ok {
		return s.(string)
	}
	dialect := db.Dialector.Name()
	q := quoter{db}
	tt := t.on(dialect)
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(q.in(tt, tt.name))
	b.WriteString(insertColumns)
	n := 0
	for r := range rows {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range columnsPerRow {
			if c > 0 {
				b.WriteString(", ")
			}
			n++
			if dialect == "postgres" {
				b.WriteByte('$')
				b.WriteString(strconv.Itoa(n))
			} else {
				b.WriteByte('?')
			}
		}
		b.WriteByte(')')
	}
	if c.skip {
		// No conflict target: any unique index, the partial one of
		// WithIdempotentCalls included; only uniqueness is skipped, never
		// a NOT NULL or CHECK (INSERT OR IGNORE would skip those too).
		b.WriteString(" ON CONFLICT DO NOTHING")
	}
	s := b.String()
	c.m.Store(k, s)
	return s
}

// exec inserts traces into t with one statement through db's pool, and
// returns how many rows were skipped (c.skip: already held by the unique
// index).
func (c *inserts) exec(ctx context.Context, db *gorm.DB, t table, traces []*Trace) (skipped int, err error) {
	args := make([]any, 0, len(traces)*columnsPerRow)
	for _, tr := range traces {
		args = rowValues(args, tr)
	}
	res, err := db.Statement.ConnPool.ExecContext(ctx, c.statement(db, t, len(traces)), args...)
	if err != nil || !c.skip {
		return 0, err
	}
	return skippedRows(res, len(traces))
}

// skippedRows is how many of n rows an INSERT did not write.
func skippedRows(res sql.Result, n int) (int, error) {
	written, err := res.RowsAffected()
	if err != nil {
		return 0, err
	}
	return n - int(written), nil
}

// chunks splits n rows into the row counts of its statements: per rows
// each, the rest in one statement; with pow2, the rest in statements of
// powers of two rows, so that the statements of every batch size are
// among a few (SQLite keeps each prepared statement's program, about
// 1.5 KB a row: one per size from 1 to 500 rows would hold 190 MB).
func chunks(n, per int, pow2 bool) []int {
	var out []int
	for ; n >= per; n -= per {
		out = append(out, per)
	}
	if n > 0 && !pow2 {
		return append(out, n)
	}
	for bit := 1 << 30; n > 0; bit >>= 1 {
		if n&bit != 0 {
			out = append(out, bit)
			n -= bit
		}
	}
	return out
}

// oneChunk reports whether chunks(n, per, true) is one statement.
func oneChunk(n, per int) bool { return n == per || (n < per && n&(n-1) == 0) }

// execBatch inserts traces into t in one transaction, in statements of the
// row counts of chunks(len(traces), per, pow2). The statements are
// prepared once on the database and bound to each transaction with
// Tx.StmtContext, which reuses the connection's prepared statement: gorm's
// transaction would prepare each statement again on the transaction's
// connection, which on SQLite costs more than the insert. A pool that is
// not a *sql.DB (a gorm plugin's) gets one statement per chunk through
// gorm's pool instead.
func (c *inserts) execBatch(ctx context.Context, db *gorm.DB, t table, traces []*Trace, per int, pow2 bool) (skipped int, err error) {
	sizes := chunks(len(traces), per, pow2)
	sqlDB, err := db.DB()
	if err != nil {
		rows := traces
		for _, n := range sizes {
			s, err := c.exec(ctx, db, t, rows[:n])
			if err != nil {
				return 0, err
			}
			skipped += s
			rows = rows[n:]
		}
		return skipped, nil
	}
	// Prepared before the transaction takes a connection: a pool of one
	// (SQLite with attached databases) has no other to prepare on.
	stmts := make(map[int]*sql.Stmt, 4)
	for _, n := range sizes {
		if stmts[n] != nil {
			continue
		}
		stmt, done, err := c.prepare(ctx, sqlDB, db, t, n)
		if err != nil {
			return 0, err
		}
		defer done()
		stmts[n] = stmt
	}
	tx, err := sqlDB.BeginTx(ctx, nil)
	if err != nil {
		return 0, err
	}
	args := make([]any, 0, per*columnsPerRow)
	rows := traces
	for _, n := range sizes {
		args = args[:0]
		for _, tr := range rows[:n] {
			args = rowValues(args, tr)
		}
		res, err := tx.StmtContext(ctx, stmts[n]).ExecContext(ctx, args...)
		if err == nil && c.skip {
			var s int
			s, err = skippedRows(res, n)
			skipped += s
		}
		if err != nil {
			_ = tx.Rollback()
			return 0, err
		}
		rows = rows[n:]
	}
	return skipped, tx.Commit()
}

// prepare returns the INSERT of rows rows into t prepared on sqlDB, and
// the function to call when done with it (which closes one that was not
// kept).
func (c *inserts) prepare(ctx context.Context, sqlDB *sql.DB, db *gorm.DB, t table, rows int) (*sql.Stmt, func(), error) {
	keep := func() {}
	k := insertKey{t, rows}
	if s, ok := c.prepared.Load(k); ok {
		return s.(*sql.Stmt), keep, nil
	}
	s, err := sqlDB.PrepareContext(ctx, c.statement(db, t, rows))
	if err != nil {
		return nil, keep, err
	}
	if c.kept.Add(1) > maxPrepared {
		c.kept.Add(-1)
		return s, func() { _ = s.Close() }, nil
	}
	if prev, loaded := c.prepared.LoadOrStore(k, s); loaded {
		c.kept.Add(-1)
		_ = s.Close()
		return prev.(*sql.Stmt), keep, nil
	}
	return s, keep, nil
}
