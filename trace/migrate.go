package trace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"gorm.io/gorm"
)

// ErrUnsupportedDatabase is returned by [Migrate] for a database other than
// SQLite or PostgreSQL.
var ErrUnsupportedDatabase = errors.New("trace: unsupported database")

// Migrate creates the traces table — [DefaultTable], or the one named by
// [WithTable] — if it does not exist, with indexes for the usual queries —
// (tenant_id, conversation_id, inserted_at), (tool_name), (parent_id) and
// (tenant_id, conversation_id, call_id) —
// and triggers that make the table insert-only in the database itself, so
// that raw SQL or a gorm session that skips hooks cannot change the log
// either. It is idempotent and runs in one transaction. db must be SQLite
// or PostgreSQL. Of the options, it reads only WithTable and
// WithIdempotentCalls (which adds a unique index, see its doc) and
// WithSharedSecrets (which adds [SecretsTable] in the table's schema); a new
// tenant's table is one call:
// Migrate(db, trace.WithTable("tenant_42.tool_traces")). The
// schema must exist: Migrate does not create it.
//
// The indexes, the triggers and (on PostgreSQL) the triggers' function live
// in the table's schema, named after the table: TABLE_tool_name_index, and so
// on (a name longer than [MaxIdentifierBytes] is shortened with a hash). The
// guard means old traces can only be pruned deliberately: drop the trigger
// (TABLE_insert_only on PostgreSQL, TABLE_no_update and TABLE_no_delete on
// SQLite; for the default table, tool_traces_insert_only and so on) in the
// same transaction as the DELETE.
func Migrate(db *gorm.DB, opts ...Option) error {
	if db == nil {
		return errors.New("trace: Migrate needs a *gorm.DB, got nil")
	}
	c := newConfig(opts)
	if c.tableFrom != nil {
		return errors.New("trace: Migrate was given trace.WithTableFrom, which picks a table per call: name the table to create with trace.WithTable")
	}
	t, err := c.staticTable()
	if err != nil {
		return fmt.Errorf("trace: Migrate: %w", err)
	}
	q := quoter{db}
	name := db.Dialector.Name()
	t = t.on(name)
	var stmts []string
	switch name {
	case "sqlite":
		stmts = sqliteSchema(q, t)
		if c.idempotentCalls {
			stmts = append(stmts, uniqueCallIndex(q.in(t, t.derived(uniqueIndexSuffix)), q.id(t.name)))
		}
	case "postgres":
		stmts = postgresSchema(q, t)
		if c.idempotentCalls {
			stmts = append(stmts, uniqueCallIndex(q.id(t.derived(uniqueIndexSuffix)), q.in(t, t.name)))
		}
	default:
		return fmt.Errorf("%w: %q (use SQLite or PostgreSQL)", ErrUnsupportedDatabase, name)
	}
	if c.sharedSecrets {
		stmts = append(stmts, secretsSchema(q, t, name))
	}
	migrate := func(tx *gorm.DB) error {
		switch name {
		case "sqlite":
			if err := caseClash(tx, t); err != nil {
				return err
			}
			for _, col := range [][2]string{{"parent_id", "text"}, {"agent_id", "text"}, {"call_id", "text"}, {"cost_usd", "real CHECK (cost_usd >= 0)"}, {"unpriced_calls", "integer CHECK (unpriced_calls >= 0)"}} {
				if err := addSQLiteColumn(tx, q, t, col[0], col[1]); err != nil {
					return err
				}
			}
		case "postgres":
			// Migrations of one table wait for each other: a host migrating
			// each tenant lazily may start many at once.
			if err := tx.Exec(`SELECT pg_advisory_xact_lock(hashtext(?))`, "llmtoolkit/trace.Migrate/"+t.String()).Error; err != nil {
				return err
			}
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return checkIndexes(tx, name, q, t, c.idempotentCalls)
	}
	for attempt := 0; ; attempt++ {
		err = db.Transaction(migrate)
		// SQLite: two migrations that both read before writing cannot wait
		// for each other (the busy timeout does not apply): try again.
		if err == nil || name != "sqlite" || !isBusy(err) || attempt == migrateRetries {
			break
		}
		time.Sleep(time.Duration(attempt+1) * 10 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("trace: migrating %s: %w", t, err)
	}
	return nil
}

// migrateRetries bounds the retries of a SQLite migration that found the
// database busy.
const migrateRetries = 50

// isBusy reports whether err is SQLite's "database is locked".
func isBusy(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "SQLITE_BUSY") || strings.Contains(msg, "database is locked")
}

// checkIndexes verifies that each index Migrate names exists on t: CREATE
// INDEX IF NOT EXISTS skips a name another relation holds, and Migrate
// must never report success over a missing index.
func checkIndexes(tx *gorm.DB, dialect string, q quoter, t table, unique bool) error {
	suffixes := []string{tenantIndexSuffix, toolIndexSuffix, parentIndexSuffix, callIndexSuffix}
	if unique {
		suffixes = append(suffixes, uniqueIndexSuffix)
	}
	for _, suffix := range suffixes {
		idx := t.derived(suffix)
		n, err := countIndex(tx, dialect, q, t, idx)
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("the index %s of %s is missing: its name is taken by another table or index; rename that one or choose another table name", idx, t)
		}
	}
	return nil
}

// countIndex counts the indexes named idx on t (0 or 1).
func countIndex(tx *gorm.DB, dialect string, q quoter, t table, idx string) (n int64, err error) {
	if dialect == "postgres" {
		err = tx.Raw(`SELECT count(*) FROM pg_indexes WHERE schemaname = COALESCE(NULLIF(?, ''), current_schema()) AND tablename = ? AND indexname = ?`,
			t.schema, t.name, idx).Scan(&n).Error
	} else {
		err = tx.Raw(`SELECT count(*) FROM `+q.id(t.schema)+`.sqlite_master WHERE type = 'index' AND name = ? AND tbl_name = ?`,
			idx, t.name).Scan(&n).Error
	}
	return n, err
}

// caseClash returns an error wrapping ErrInvalidTable when SQLite holds a
// table whose name differs from t's only by case (SQLite would use it for
// t).
func caseClash(db *gorm.DB, t table) error {
	var names []string
	err := db.Raw(`SELECT name FROM `+quoter{db}.id(t.schema)+`.sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE`, t.name).Scan(&names).Error
	if err != nil {
		return err
	}
	for _, n := range names {
		if n != t.name {
			return fmt.Errorf("%w %q: it differs only by case from the existing table %q, and SQLite ignores case in names; use %q or a name of its own", ErrInvalidTable, t.String(), t.schema+"."+n, t.schema+"."+n)
		}
	}
	return nil
}

// ErrNoTable is wrapped by the error of a call a [Recorder] refuses before
// the tool runs because the table its row goes to does not exist: [Migrate]
// was not called for it (or, for a Recorder given [WithIdempotentCalls],
// was called without it: the table lacks its unique index).
var ErrNoTable = errors.New("trace: the traces table does not exist")

// tableChecks remembers, for a Recorder, the tables found to exist (on
// SQLite, also not to clash by case with another).
type tableChecks struct {
	ok     sync.Map // table -> struct{}
	unique bool     // WithIdempotentCalls: the table must have its unique index
}

// check returns an error wrapping [ErrNoTable] when t does not exist, or
// caseClash's error, querying until the table is found; an error of the
// query itself is left for the write to report.
func (c *tableChecks) check(ctx context.Context, db *gorm.DB, t table) error {
	if db == nil {
		return nil
	}
	dialect := db.Dialector.Name()
	given := t
	t = t.on(dialect)
	if _, ok := c.ok.Load(t); ok {
		return nil
	}
	db = db.WithContext(ctx)
	var n int64
	var clash error
	err := dbGuarded(db, func() error { // a driver's panic: the write will report it
		switch dialect {
		case "sqlite":
			if clash = caseClash(db, t); clash != nil {
				return clash
			}
			return db.Raw(`SELECT count(*) FROM `+quoter{db}.id(t.schema)+`.sqlite_master WHERE type = 'table' AND name = ?`, t.name).Scan(&n).Error
		case "postgres":
			return db.Raw(`SELECT count(*) FROM information_schema.tables WHERE table_schema = COALESCE(NULLIF(?, ''), current_schema()) AND table_name = ?`,
				t.schema, t.name).Scan(&n).Error
		}
		n = 1 // another database: Migrate refuses it; the write will say why
		return nil
	})
	if errors.Is(clash, ErrInvalidTable) {
		return clash
	}
	if err != nil {
		return nil
	}
	if n == 0 {
		how := "trace.Migrate(db)"
		if !given.isDefault() {
			how = fmt.Sprintf("trace.Migrate(db, trace.WithTable(%q))", given.String())
		}
		return fmt.Errorf("%w: %s; call %s once before recording", ErrNoTable, given, how)
	}
	if c.unique && (dialect == "sqlite" || dialect == "postgres") {
		var n int64
		err := dbGuarded(db, func() (err error) {
			n, err = countIndex(db, dialect, quoter{db}, t, t.derived(uniqueIndexSuffix))
			return err
		})
		if err != nil {
			return nil // the write will report it
		}
		if n == 0 {
			how := "trace.Migrate(db, trace.WithIdempotentCalls())"
			if !given.isDefault() {
				how = fmt.Sprintf("trace.Migrate(db, trace.WithTable(%q), trace.WithIdempotentCalls())", given.String())
			}
			return fmt.Errorf("%w: %s has no unique index of completed calls (trace.WithIdempotentCalls); call %s once before recording", ErrNoTable, given, how)
		}
	}
	c.ok.Store(t, struct{}{})
	return nil
}

// quoter quotes identifiers with the database's own quoting. The names it
// is given are validated identifiers (parseTable) or derived from them.
type quoter struct{ db *gorm.DB }

// id quotes one identifier.
func (q quoter) id(s string) string {
	var b strings.Builder
	q.db.Dialector.QuoteTo(&b, s)
	return b.String()
}

// in quotes name, qualified with t's schema if it has one.
func (q quoter) in(t table, name string) string {
	if t.schema == "" {
		return q.id(name)
	}
	return q.id(t.schema) + "." + q.id(name)
}

// The index names, after the table's name.
const (
	tenantIndexSuffix = "tenant_id_conversation_id_inserted_at_index"
	toolIndexSuffix   = "tool_name_index"
	parentIndexSuffix = "parent_id_index"
	callIndexSuffix   = "call_id_index"
	uniqueIndexSuffix = "call_id_unique" // WithIdempotentCalls'
)

// uniqueCallIndex returns the CREATE UNIQUE INDEX of [WithIdempotentCalls]:
// one completed row per call (see its doc).
func uniqueCallIndex(idx, on string) string {
	return `CREATE UNIQUE INDEX IF NOT EXISTS ` + idx + ` ON ` + on +
		` (tenant_id, conversation_id, (COALESCE(agent_id, '')), iteration, call_id, tool_name) WHERE call_id IS NOT NULL AND result_type = 'ok'`
}

// indexes returns the CREATE INDEX statements: index names as written by
// idx, on the table as written by on.
func indexes(t table, idx func(string) string, on string) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(tenantIndexSuffix)) + ` ON ` + on + ` (tenant_id, conversation_id, inserted_at)`,
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(toolIndexSuffix)) + ` ON ` + on + ` (tool_name)`,
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(parentIndexSuffix)) + ` ON ` + on + ` (parent_id)`,
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(callIndexSuffix)) + ` ON ` + on + ` (tenant_id, conversation_id, call_id)`,
	}
}

// sqliteSchema returns the statements that create t on SQLite. An index or
// a trigger is named in the table's schema (the attached database) and
// names its table unqualified, as SQLite requires.
func sqliteSchema(q quoter, t table) []string {
	tbl := q.in(t, t.name)
	stmts := []string{`
CREATE TABLE IF NOT EXISTS ` + tbl + ` (
  id              text PRIMARY KEY NOT NULL,
  tenant_id       text NOT NULL,
  conversation_id text NOT NULL,
  tool_name       text NOT NULL,
  arguments       text NOT NULL DEFAULT '{}',
  result          text NOT NULL DEFAULT '{}',
  result_type     text NOT NULL CHECK (result_type IN ('ok', 'error')),
  duration_ms     integer NOT NULL CHECK (duration_ms >= 0),
  iteration       integer NOT NULL CHECK (iteration >= 0),
  inserted_at     datetime NOT NULL,
  parent_id       text,
  agent_id        text,
  call_id         text,
  cost_usd        real CHECK (cost_usd >= 0),
  unpriced_calls  integer CHECK (unpriced_calls >= 0)
)`}
	on := q.id(t.name)
	stmts = append(stmts, indexes(t, func(n string) string { return q.in(t, n) }, on)...)
	// t's name is a validated identifier: it cannot end the string literal.
	for _, op := range []string{"UPDATE", "DELETE"} {
		shown := t.String()
		if t.schema == "main" {
			shown = t.name
		}
		stmts = append(stmts, `
CREATE TRIGGER IF NOT EXISTS `+q.in(t, t.derived("no_"+strings.ToLower(op)))+` BEFORE `+op+` ON `+on+`
BEGIN SELECT RAISE(ABORT, '`+shown+` is insert-only: `+op+` is not allowed'); END`)
	}
	return stmts
}

// postgresSchema returns the statements that create t on PostgreSQL. Index
// and trigger names cannot be qualified: PostgreSQL puts them in the
// table's schema; the function is put there by name.
func postgresSchema(q quoter, t table) []string {
	tbl := q.in(t, t.name)
	fn := q.in(t, t.derived("insert_only"))
	trigger := q.id(t.derived("insert_only"))
	truncate := q.id(t.derived("no_truncate"))
	stmts := []string{`
CREATE TABLE IF NOT EXISTS ` + tbl + ` (
  id              uuid PRIMARY KEY,
  tenant_id       uuid NOT NULL,
  conversation_id uuid NOT NULL,
  tool_name       text NOT NULL,
  arguments       jsonb NOT NULL DEFAULT '{}',
  result          jsonb NOT NULL DEFAULT '{}',
  result_type     text NOT NULL CHECK (result_type IN ('ok', 'error')),
  duration_ms     bigint NOT NULL CHECK (duration_ms >= 0),
  iteration       integer NOT NULL CHECK (iteration >= 0),
  inserted_at     timestamptz NOT NULL,
  parent_id       uuid,
  agent_id        text,
  call_id         text,
  cost_usd        double precision CHECK (cost_usd >= 0),
  unpriced_calls  integer CHECK (unpriced_calls >= 0)
)`, `ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS parent_id uuid`,
		`ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS agent_id text`,
		`ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS call_id text`,
		`ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS cost_usd double precision CHECK (cost_usd >= 0)`,
		`ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS unpriced_calls integer CHECK (unpriced_calls >= 0)`}
	stmts = append(stmts, indexes(t, q.id, tbl)...)
	return append(stmts, `
CREATE OR REPLACE FUNCTION `+fn+`() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%.% is insert-only: % is not allowed', TG_TABLE_SCHEMA, TG_TABLE_NAME, TG_OP;
END
$$`,
		`DROP TRIGGER IF EXISTS `+trigger+` ON `+tbl, `
CREATE TRIGGER `+trigger+` BEFORE UPDATE OR DELETE ON `+tbl+`
FOR EACH ROW EXECUTE FUNCTION `+fn+`()`,
		`DROP TRIGGER IF EXISTS `+truncate+` ON `+tbl, `
CREATE TRIGGER `+truncate+` BEFORE TRUNCATE ON `+tbl+`
FOR EACH STATEMENT EXECUTE FUNCTION `+fn+`()`,
	)
}

// addSQLiteColumn adds the nullable column col of type typ (parent_id,
// agent_id, call_id: text; cost_usd: real; unpriced_calls: integer) to a
// table made before it existed (SQLite has no ADD COLUMN IF NOT EXISTS).
// col and typ are this package's constants.
func addSQLiteColumn(tx *gorm.DB, q quoter, t table, col, typ string) error {
	master, info, args := "sqlite_master", "pragma_table_info(?)", []any{t.name}
	if t.schema != "" {
		master, info, args = q.id(t.schema)+".sqlite_master", "pragma_table_info(?, ?)", []any{t.name, t.schema}
	}
	var tables, columns int64
	if err := tx.Raw(`SELECT count(*) FROM `+master+` WHERE type = 'table' AND name = ? COLLATE NOCASE`, t.name).Scan(&tables).Error; err != nil || tables == 0 {
		return err
	}
	if err := tx.Raw(`SELECT count(*) FROM `+info+` WHERE name = ?`, append(args, col)...).Scan(&columns).Error; err != nil || columns > 0 {
		return err
	}
	return tx.Exec(`ALTER TABLE ` + q.in(t, t.name) + ` ADD COLUMN ` + q.id(col) + ` ` + typ).Error
}
