package trace

import (
	"errors"
	"fmt"

	"gorm.io/gorm"
)

// ErrUnsupportedDatabase is returned by [Migrate] for a database other than
// SQLite or PostgreSQL.
var ErrUnsupportedDatabase = errors.New("trace: unsupported database")

// Migrate creates the tool_traces table if it does not exist, with indexes
// for the usual queries — (tenant_id, conversation_id, inserted_at),
// (tool_name) and (parent_id) — and triggers that make the table insert-only in the
// database itself, so that raw SQL or a gorm session that skips hooks
// cannot change the log either. It is idempotent and runs in one
// transaction. db must be SQLite or PostgreSQL.
//
// The guard means old traces can only be pruned deliberately: drop the
// trigger (tool_traces_insert_only on PostgreSQL, tool_traces_no_update and
// tool_traces_no_delete on SQLite) in the same transaction as the DELETE.
func Migrate(db *gorm.DB) error {
	if db == nil {
		return errors.New("trace: Migrate needs a *gorm.DB, got nil")
	}
	var stmts []string
	switch name := db.Dialector.Name(); name {
	case "sqlite":
		stmts = sqliteSchema
	case "postgres":
		stmts = postgresSchema
	default:
		return fmt.Errorf("%w: %q (use SQLite or PostgreSQL)", ErrUnsupportedDatabase, name)
	}
	err := db.Transaction(func(tx *gorm.DB) error {
		if db.Dialector.Name() == "sqlite" {
			if err := addSQLiteParentColumn(tx); err != nil {
				return err
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
		return fmt.Errorf("trace: migrating tool_traces: %w", err)
	}
	return nil
}

const indexes = `
CREATE INDEX IF NOT EXISTS tool_traces_tenant_id_conversation_id_inserted_at_index
  ON tool_traces (tenant_id, conversation_id, inserted_at)`

const toolIndex = `
CREATE INDEX IF NOT EXISTS tool_traces_tool_name_index ON tool_traces (tool_name)`

const parentIndex = `
CREATE INDEX IF NOT EXISTS tool_traces_parent_id_index ON tool_traces (parent_id)`

var sqliteSchema = []string{`
CREATE TABLE IF NOT EXISTS tool_traces (
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
  parent_id       text
)`, indexes, toolIndex, parentIndex, `
CREATE TRIGGER IF NOT EXISTS tool_traces_no_update BEFORE UPDATE ON tool_traces
BEGIN SELECT RAISE(ABORT, 'tool_traces is insert-only: UPDATE is not allowed'); END`, `
CREATE TRIGGER IF NOT EXISTS tool_traces_no_delete BEFORE DELETE ON tool_traces
BEGIN SELECT RAISE(ABORT, 'tool_traces is insert-only: DELETE is not allowed'); END`,
}

var postgresSchema = []string{`
CREATE TABLE IF NOT EXISTS tool_traces (
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
  parent_id       uuid
)`, `ALTER TABLE tool_traces ADD COLUMN IF NOT EXISTS parent_id uuid`, indexes, toolIndex, parentIndex, `
CREATE OR REPLACE FUNCTION tool_traces_insert_only() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION 'tool_traces is insert-only: % is not allowed', TG_OP;
END
$$`,
	`DROP TRIGGER IF EXISTS tool_traces_insert_only ON tool_traces`, `
CREATE TRIGGER tool_traces_insert_only BEFORE UPDATE OR DELETE ON tool_traces
FOR EACH ROW EXECUTE FUNCTION tool_traces_insert_only()`,
	`DROP TRIGGER IF EXISTS tool_traces_no_truncate ON tool_traces`, `
CREATE TRIGGER tool_traces_no_truncate BEFORE TRUNCATE ON tool_traces
FOR EACH STATEMENT EXECUTE FUNCTION tool_traces_insert_only()`,
}

// addSQLiteParentColumn adds parent_id to a table made before it existed
// (SQLite has no ADD COLUMN IF NOT EXISTS).
func addSQLiteParentColumn(tx *gorm.DB) error {
	var tables, columns int64
	if err := tx.Raw(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'tool_traces'`).Scan(&tables).Error; err != nil || tables == 0 {
		return err
	}
	if err := tx.Raw(`SELECT count(*) FROM pragma_table_info('tool_traces') WHERE name = 'parent_id'`).Scan(&columns).Error; err != nil || columns > 0 {
		return err
	}
	return tx.Exec(`ALTER TABLE tool_traces ADD COLUMN parent_id text`).Error
}
