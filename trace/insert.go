package trace

import (
	"context"
	"strconv"
	"strings"
	"sync"

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
const insertColumns = " (id, tenant_id, conversation_id, tool_name, arguments, result, result_type, duration_ms, iteration, inserted_at, parent_id, agent_id, call_id) VALUES "

// columnsPerRow is the number of columns in insertColumns.
const columnsPerRow = 13

// rowValues appends t's values to args, in insertColumns' order.
func rowValues(args []any, t *Trace) []any {
	return append(args, t.ID, t.TenantID, t.ConversationID, t.ToolName, t.Arguments, t.Result,
		t.ResultType, t.DurationMS, t.Iteration, t.InsertedAt, t.ParentID, t.AgentID, t.CallID)
}

// insertKey names one INSERT statement: its table and its number of rows.
type insertKey struct {
	t    table
	rows int
}

// inserts caches the INSERT statements of a Recorder.
type inserts struct{ m sync.Map } // insertKey -> string

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
	s := b.String()
	c.m.Store(k, s)
	return s
}

// exec inserts traces into t with one statement through db's pool.
func (c *inserts) exec(ctx context.Context, db *gorm.DB, t table, traces []*Trace) error {
	args := make([]any, 0, len(traces)*columnsPerRow)
	for _, tr := range traces {
		args = rowValues(args, tr)
	}
	_, err := db.Statement.ConnPool.ExecContext(ctx, c.statement(db, t, len(traces)), args...)
	return err
}
