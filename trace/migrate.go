package trace

import (
	"errors"
	"fmt"
	"strings"

	"gorm.io/gorm"
)

// ErrUnsupportedDatabase is returned by [Migrate] for a database other than
// SQLite or PostgreSQL.
var ErrUnsupportedDatabase = errors.New("trace: unsupported database")

// Migrate creates the traces table — [DefaultTable], or the one named by
// [InTable] — if it does not exist, with indexes for the usual queries —
// (tenant_id, conversation_id, inserted_at), (tool_name) and (parent_id) —
// and triggers that make the table insert-only in the database itself, so
// that raw SQL or a gorm session that skips hooks cannot change the log
// either. It is idempotent and runs in one transaction. db must be SQLite
// or PostgreSQL. Of the options, it reads only InTable; a new tenant's table
// is one call: Migrate(db, trace.InTable("tenant_42.tool_traces")). The
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
		return errors.New("trace: Migrate was given trace.TableFrom, which picks a table per call: name the table to create with trace.InTable")
	}
	t, err := c.staticTable()
	if err != nil {
		return fmt.Errorf("trace: Migrate: %w", err)
	}
	q := quoter{db}
	name := db.Dialector.Name()
	var stmts []string
	switch name {
	case "sqlite":
		stmts = sqliteSchema(q, t)
	case "postgres":
		stmts = postgresSchema(q, t)
	default:
		return fmt.Errorf("%w: %q (use SQLite or PostgreSQL)", ErrUnsupportedDatabase, name)
	}
	err = db.Transaction(func(tx *gorm.DB) error {
		if name == "sqlite" {
			for _, col := range []string{"parent_id", "agent_id"} {
				if err := addSQLiteColumn(tx, q, t, col); err != nil {
					return err
				}
			}
		}
		for _, s := range stmts {
			if err := tx.Exec(s).Error; err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("trace: migrating %s: %w", t, err)
	}
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
)

// indexes returns the CREATE INDEX statements: index names as written by
// idx, on the table as written by on.
func indexes(t table, idx func(string) string, on string) []string {
	return []string{
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(tenantIndexSuffix)) + ` ON ` + on + ` (tenant_id, conversation_id, inserted_at)`,
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(toolIndexSuffix)) + ` ON ` + on + ` (tool_name)`,
		`CREATE INDEX IF NOT EXISTS ` + idx(t.derived(parentIndexSuffix)) + ` ON ` + on + ` (parent_id)`,
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
  agent_id        text
)`}
	on := q.id(t.name)
	stmts = append(stmts, indexes(t, func(n string) string { return q.in(t, n) }, on)...)
	// t's name is a validated identifier: it cannot end the string literal.
	for _, op := range []string{"UPDATE", "DELETE"} {
		stmts = append(stmts, `
CREATE TRIGGER IF NOT EXISTS `+q.in(t, t.derived("no_"+strings.ToLower(op)))+` BEFORE `+op+` ON `+on+`
BEGIN SELECT RAISE(ABORT, '`+t.String()+` is insert-only: `+op+` is not allowed'); END`)
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
  agent_id        text
)`, `ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS parent_id uuid`,
		`ALTER TABLE ` + tbl + ` ADD COLUMN IF NOT EXISTS agent_id text`}
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

// addSQLiteColumn adds the nullable text column col (parent_id, agent_id)
// to a table made before it existed (SQLite has no ADD COLUMN IF NOT
// EXISTS). col is one of this package's constant names.
func addSQLiteColumn(tx *gorm.DB, q quoter, t table, col string) error {
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
	return tx.Exec(`ALTER TABLE ` + q.in(t, t.name) + ` ADD COLUMN ` + q.id(col) + ` text`).Error
}
