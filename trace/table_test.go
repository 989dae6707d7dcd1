package trace_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// hostileTables are names that must never reach the database.
var hostileTables = []struct{ name, why string }{
	{"", "empty"},
	{"x; DROP TABLE y", "not allowed"},
	{"y; --", "not allowed"},
	{`x"; DROP TABLE y; --`, "not allowed"},
	{`"tool_traces"`, "not allowed"},
	{"x'y", "not allowed"},
	{"x`y", "not allowed"},
	{"tool traces", "not allowed"},
	{"tool-traces", "not allowed"},
	{"x\x00y", "not allowed"},
	{"x\ny", "not allowed"},
	{"tablé", "not allowed"},
	{"tenant_42.tool_traces;", "not allowed"},
	{".tool_traces", "schema before the dot is empty"},
	{"tool_traces.", "table name after the dot is empty"},
	{"a.b.c", "2 dots"},
	{"a..b", "2 dots"},
	{".", "schema before the dot is empty"},
	{"9lives", "starts with a digit"},
	{"tenant_42.9lives", "starts with a digit"},
	{strings.Repeat("t", 64), "64 bytes long"},
	{strings.Repeat("s", 64) + ".tool_traces", "64 bytes long"},
	{"tenant_42." + strings.Repeat("t", 100), "100 bytes long"},
}

// goodTable is what a valid name looks like.
var goodTable = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]{0,62}\.)?[A-Za-z_][A-Za-z0-9_]{0,62}$`)

func TestValidateTable(t *testing.T) {
	for _, name := range []string{
		"tool_traces", "tenant_42.tool_traces", "_x", "A_b9", "aux.tool_traces", "main.t",
		"select", "public.order", strings.Repeat("t", 63), strings.Repeat("s", 63) + "." + strings.Repeat("t", 63),
	} {
		assert.NoError(t, trace.ValidateTable(name), name)
	}
	for _, h := range hostileTables {
		err := trace.ValidateTable(h.name)
		require.ErrorIs(t, err, trace.ErrInvalidTable, "%q", h.name)
		assert.ErrorContains(t, err, fmt.Sprintf("%q", h.name), "the error quotes the name")
		assert.ErrorContains(t, err, h.why, "%q", h.name)
		assert.ErrorContains(t, err, "schema.name", "the error says how to write one")
	}
}

func FuzzValidateTable(f *testing.F) {
	for _, h := range hostileTables {
		f.Add(h.name)
	}
	f.Add("tenant_42.tool_traces")
	f.Fuzz(func(t *testing.T, name string) {
		err := trace.ValidateTable(name)
		if goodTable.MatchString(name) {
			assert.NoError(t, err, "%q", name)
		} else {
			assert.ErrorIs(t, err, trace.ErrInvalidTable, "%q", name)
		}
	})
}

// TestHostileTableNames checks that no entry point lets a bad name reach
// the database: the victim table y survives them all.
func TestHostileTableNames(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.Exec(`CREATE TABLE y (n integer)`).Error)
		for _, h := range hostileTables {
			opt := trace.WithTable(h.name)
			err := trace.Migrate(db, opt)
			require.ErrorIs(t, err, trace.ErrInvalidTable, "Migrate %q", h.name)
			assert.ErrorContains(t, err, "trace.WithTable", "the error names the argument")

			_, err = trace.List(t.Context(), db, trace.Filter{}, opt)
			require.ErrorIs(t, err, trace.ErrInvalidTable, "List %q", h.name)

			fake := newSecretive()
			rec := trace.Record(fake, db, opt, trace.WithLogger(discardLogger()))
			_, err = rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
			require.ErrorIs(t, err, trace.ErrInvalidTable, "Record %q", h.name)
			assert.Empty(t, fake.Calls(), "the tool did not run")

			pick := trace.WithTableFrom(func(context.Context) (string, error) { return h.name, nil })
			rec = trace.Record(fake, db, pick, trace.WithLogger(discardLogger()))
			_, err = rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
			require.ErrorIs(t, err, trace.ErrInvalidTable, "WithTableFrom %q", h.name)
			assert.ErrorContains(t, err, "trace.WithTableFrom")
			assert.Empty(t, fake.Calls(), "the tool did not run")
			_, err = trace.List(t.Context(), db, trace.Filter{}, pick)
			require.ErrorIs(t, err, trace.ErrInvalidTable, "List with WithTableFrom %q", h.name)
		}
		var n int64
		require.NoError(t, db.Raw(`SELECT count(*) FROM y`).Scan(&n).Error, "y survives")
		assert.Zero(t, count(t, db), "tool_traces holds no row")
	})
}

// tenantSetup is a pool through which two tenants' tables are reached.
type tenantSetup struct {
	db     *gorm.DB
	tables [2]string
}

// forEachTenantDB runs fn with two tenants' tables, not yet migrated, in
// one pool: attached databases and plain tables on SQLite, schemas on
// PostgreSQL.
func forEachTenantDB(t *testing.T, fn func(t *testing.T, s tenantSetup)) {
	t.Helper()
	t.Run("sqlite tables", func(t *testing.T) {
		db := openSQLite(t)
		fn(t, tenantSetup{db, [2]string{"tenant_a_traces", "tenant_b_traces"}})
	})
	t.Run("sqlite attached", func(t *testing.T) {
		db := openSQLite(t)
		sqlDB, err := db.DB()
		require.NoError(t, err)
		sqlDB.SetMaxOpenConns(1) // ATTACH is per connection
		dir := t.TempDir()
		for _, name := range []string{"ta", "tb"} {
			require.NoError(t, db.Exec(`ATTACH DATABASE ? AS `+name, filepath.Join(dir, name+".db")).Error)
		}
		fn(t, tenantSetup{db, [2]string{"ta.tool_traces", "tb.tool_traces"}})
	})
	t.Run("postgres schemas", func(t *testing.T) {
		db, schemas := postgresSchemas(t, 2)
		fn(t, tenantSetup{db, [2]string{schemas[0] + ".tool_traces", schemas[1] + ".tool_traces"}})
	})
}

// postgresSchemas opens a pool whose search_path is an empty schema of its
// own, and makes n more schemas; all are dropped at the end of the test.
func postgresSchemas(tb testing.TB, n int) (*gorm.DB, []string) {
	tb.Helper()
	dsn := os.Getenv(postgresDSNVar)
	if dsn == "" {
		tb.Skip(postgresDSNVar + " is not set: skipping the PostgreSQL tests")
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	admin, err := gorm.Open(postgres.Open(dsn), cfg)
	require.NoError(tb, err)
	var schemas []string
	for range n + 1 {
		s := "trace_tenant_" + strings.ReplaceAll(uuid.NewString(), "-", "")
		require.NoError(tb, admin.Exec("CREATE SCHEMA "+s).Error)
		schemas = append(schemas, s)
	}
	db, err := gorm.Open(postgres.Open(dsn+" search_path="+schemas[0]), cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
		for _, s := range schemas {
			_ = admin.Exec("DROP SCHEMA " + s + " CASCADE").Error
		}
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	return db, schemas[1:]
}

// tenantTable picks the table of the session's tenant.
func tenantTable(tables map[string]string) func(ctx context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		id, _ := llmtoolkit.ScopeFrom(ctx).Session[trace.SessionTenantID].(string)
		if tbl, ok := tables[id]; ok {
			return tbl, nil
		}
		return "", fmt.Errorf("no table for tenant %q", id)
	}
}

// sessionOf is the context of a call in a tenant's session.
func sessionOf(ctx context.Context, tenantID string) context.Context {
	return llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) {
		sc.Session = map[string]any{
			trace.SessionTenantID: tenantID, trace.SessionConversationID: convA,
		}
	})
}

func TestTenantsThroughOnePool(t *testing.T) {
	tenants := [2]string{tenant, tenant2}
	forEachTenantDB(t, func(t *testing.T, s tenantSetup) {
		for _, tbl := range s.tables {
			require.NoError(t, trace.Migrate(s.db, trace.WithTable(tbl)), "one call migrates a tenant's table")
			require.NoError(t, trace.Migrate(s.db, trace.WithTable(tbl)), "idempotent")
		}
		pick := trace.WithTableFrom(tenantTable(map[string]string{tenants[0]: s.tables[0], tenants[1]: s.tables[1]}))

		// Synchronous, then asynchronous with every batch mixing both
		// tenants, in more rows per table than one SQLite statement takes.
		const syncCalls, asyncCalls = 6, 250
		for _, async := range []bool{false, true} {
			opts := []trace.Option{pick, trace.WithStrict()}
			calls := syncCalls
			if async {
				opts = append(opts, trace.WithAsync(), trace.WithBatchSize(2*asyncCalls), trace.WithFlushInterval(time.Minute))
				calls = asyncCalls
			}
			rec := trace.Record(echo(), s.db, opts...)
			var wg sync.WaitGroup
			for i := range 2 * calls {
				wg.Add(1)
				go func() {
					defer wg.Done()
					ctx := sessionOf(t.Context(), tenants[i%2])
					_, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": i}})
					assert.NoError(t, err)
				}()
			}
			wg.Wait()
			require.NoError(t, rec.Close())
			assert.Equal(t, trace.Stats{Recorded: int64(2 * calls)}, rec.Stats())
		}

		want := int64(syncCalls + asyncCalls)
		for i, tbl := range s.tables {
			got, err := trace.List(t.Context(), s.db, trace.Filter{}, trace.WithTable(tbl))
			require.NoError(t, err)
			require.Len(t, got, int(want), tbl)
			for _, r := range got {
				require.Equal(t, tenants[i], r.TenantID, "only tenant %d's rows are in %s", i, tbl)
				n := int(r.Arguments["n"].(float64))
				require.Equal(t, i, n%2, "call %d went to tenant %d", n, n%2)
			}
			got, err = trace.List(sessionOf(t.Context(), tenants[i]), s.db, trace.Filter{Limit: 3}, pick)
			require.NoError(t, err)
			require.Len(t, got, 3, "List picks the table from the context too")
			assert.Equal(t, tenants[i], got[0].TenantID)
		}
		if s.db.Dialector.Name() == "postgres" {
			var n int64
			require.NoError(t, s.db.Raw(`SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()`).Scan(&n).Error)
			assert.Zero(t, n, "nothing was created in the connection's own schema")
		}
	})
}

func TestTriggersHoldInEverySchema(t *testing.T) {
	forEachTenantDB(t, func(t *testing.T, s tenantSetup) {
		for _, tbl := range s.tables {
			require.NoError(t, trace.Migrate(s.db, trace.WithTable(tbl)))
			rec := trace.Record(echo(), s.db, trace.WithTable(tbl), trace.WithStrict())
			_, err := rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
			require.NoError(t, err)

			raw := []string{
				`UPDATE ` + tbl + ` SET iteration = 5`,
				`DELETE FROM ` + tbl,
			}
			if s.db.Dialector.Name() == "postgres" {
				raw = append(raw, `TRUNCATE `+tbl)
			}
			for _, sql := range raw {
				err := s.db.Exec(sql).Error
				require.Error(t, err, sql)
				assert.Contains(t, err.Error(), "insert-only", sql)
			}
			err = s.db.Table(tbl).Where("1 = 1").Updates(map[string]any{"iteration": 7}).Error
			require.Error(t, err)
			assert.Contains(t, err.Error(), "insert-only")
			err = s.db.Model(&trace.Trace{}).Table(tbl).Where("1 = 1").Delete(&trace.Trace{}).Error
			assert.ErrorIs(t, err, trace.ErrImmutable)

			got, err := trace.List(t.Context(), s.db, trace.Filter{}, trace.WithTable(tbl))
			require.NoError(t, err)
			require.Len(t, got, 1)
			assert.Equal(t, 0, got[0].Iteration, "the row is unchanged")
		}
		if s.db.Dialector.Name() != "postgres" {
			return
		}
		// Indexes, triggers and function live in each tenant's schema.
		for _, tbl := range s.tables {
			schema := strings.Split(tbl, ".")[0]
			var names []string
			require.NoError(t, s.db.Raw(`SELECT indexname FROM pg_indexes WHERE schemaname = ? AND tablename = 'tool_traces' ORDER BY indexname`, schema).Scan(&names).Error)
			assert.Equal(t, []string{"tool_traces_call_id_index", "tool_traces_parent_id_index", "tool_traces_pkey",
				"tool_traces_tenant_id_conversation_id_inserted_at_index", "tool_traces_tool_name_index"}, names)
			names = nil
			require.NoError(t, s.db.Raw(`SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = ?`, schema).Scan(&names).Error)
			assert.Equal(t, []string{"tool_traces_insert_only"}, names)
			names = nil
			require.NoError(t, s.db.Raw(`SELECT t.tgname FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
				JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = ? AND NOT t.tgisinternal ORDER BY t.tgname`, schema).Scan(&names).Error)
			assert.Equal(t, []string{"tool_traces_insert_only", "tool_traces_no_truncate"}, names)
		}
	})
}

// TestDefaultTableObjectsKeepTheirNames pins the names of the default
// table's indexes and triggers, which the docs tell users to drop to prune.
func TestDefaultTableObjectsKeepTheirNames(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, trace.Migrate(db, trace.WithTable(trace.DefaultTable)), "the default, named")
		var triggers []string
		if db.Dialector.Name() == "postgres" {
			require.NoError(t, db.Raw(`SELECT tgname FROM pg_trigger WHERE tgrelid = 'tool_traces'::regclass AND NOT tgisinternal ORDER BY tgname`).Scan(&triggers).Error)
			assert.Equal(t, []string{"tool_traces_insert_only", "tool_traces_no_truncate"}, triggers)
		} else {
			require.NoError(t, db.Raw(`SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name`).Scan(&triggers).Error)
			assert.Equal(t, []string{"tool_traces_no_delete", "tool_traces_no_update"}, triggers)
		}
	})
}

// TestLongTableNames checks that two long names sharing a prefix get
// indexes of their own: PostgreSQL would cut derived names at 63 bytes and
// the second CREATE INDEX IF NOT EXISTS would find the first's.
func TestLongTableNames(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		long := strings.Repeat("t", 60)
		for _, tbl := range []string{long + "_a", long + "_b"} {
			require.NoError(t, trace.Migrate(db, trace.WithTable(tbl)))
			require.NoError(t, trace.Migrate(db, trace.WithTable(tbl)), "idempotent")
			var names []string
			if db.Dialector.Name() == "postgres" {
				require.NoError(t, db.Raw(`SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = ? AND indexname NOT LIKE '%pkey%'`, tbl).Scan(&names).Error)
			} else {
				require.NoError(t, db.Raw(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL`, tbl).Scan(&names).Error)
			}
			assert.Len(t, names, 4, "%s has its own four indexes", tbl)
			for _, n := range names {
				assert.LessOrEqual(t, len(n), trace.MaxIdentifierBytes)
			}
			rec := trace.Record(echo(), db, trace.WithTable(tbl), trace.WithStrict())
			_, err := rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
			require.NoError(t, err)
			err = db.Exec(`DELETE FROM ` + tbl).Error
			require.Error(t, err)
			assert.Contains(t, err.Error(), "insert-only")
		}
	})
}

func TestTableFromFailures(t *testing.T) {
	db := openSQLite(t)
	errNoTenant := errors.New("no tenant in the context")
	for _, tt := range []struct {
		name string
		fn   func(context.Context) (string, error)
		is   error
		msg  string
	}{
		{"error", func(context.Context) (string, error) { return "", errNoTenant }, errNoTenant, "could not choose the table"},
		{"empty", func(context.Context) (string, error) { return "", nil }, trace.ErrInvalidTable, "empty"},
		{"panic", func(context.Context) (string, error) { panic("tenant lookup") }, nil, "panicked: tenant lookup"},
		{"missing table", func(context.Context) (string, error) { return "nowhere", nil }, nil, "nowhere"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var logs bytes.Buffer
			fake := newSecretive()
			opts := []trace.Option{trace.WithTableFrom(tt.fn), trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}
			_, err := trace.Record(fake, db, opts...).Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
			if tt.name == "missing table" { // chosen, but absent: refused before the tool runs
				require.ErrorIs(t, err, trace.ErrNoTable)
				assert.ErrorContains(t, err, `trace.Migrate(db, trace.WithTable("nowhere"))`)
				assert.Empty(t, fake.Calls())
				return
			}
			require.Error(t, err)
			if tt.is != nil {
				assert.ErrorIs(t, err, tt.is)
			}
			assert.ErrorContains(t, err, tt.msg)
			assert.Empty(t, fake.Calls(), "refused before the tool ran")
			assert.Contains(t, logs.String(), "table of a tool call could not be chosen")

			rec := trace.Record(fake, db, append(opts, trace.WithBestEffort())...)
			out, err := rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
			require.NoError(t, err)
			assert.Equal(t, "package a", out)
			assert.Equal(t, trace.Stats{Dropped: 1}, rec.Stats())
		})
	}
	t.Run("Migrate needs WithTable", func(t *testing.T) {
		err := trace.Migrate(db, trace.WithTableFrom(func(context.Context) (string, error) { return "x", nil }))
		assert.ErrorContains(t, err, "trace.WithTable")
	})
}

func TestMigrateNeedsTheSchema(t *testing.T) {
	db, _ := postgresSchemas(t, 0)
	err := trace.Migrate(db, trace.WithTable("trace_no_such_schema.tool_traces"))
	require.Error(t, err)
	assert.ErrorContains(t, err, "trace: migrating trace_no_such_schema.tool_traces")
	assert.ErrorContains(t, err, `schema "trace_no_such_schema" does not exist`)
}

// TestTenantTablesThroughSessions: one Recorder picking each call's table
// from the session's tenant, under two tenants' Sessions: resolved calls,
// calls refused by validation, recipe calls and their steps all land in
// their tenant's table.
func TestTenantTablesThroughSessions(t *testing.T) {
	tenants := [2]string{tenant, tenant2}
	forEachTenantDB(t, func(t *testing.T, s tenantSetup) {
		for _, tbl := range s.tables {
			require.NoError(t, trace.Migrate(s.db, trace.WithTable(tbl)))
		}
		tools, _ := matrixTools(t)
		rec := trace.Record(tools, s.db, trace.WithStrict(), trace.WithLogger(discardLogger()),
			trace.WithTableFrom(tenantTable(map[string]string{tenants[0]: s.tables[0], tenants[1]: s.tables[1]})))
		for _, tn := range tenants {
			_, session := llmtoolkit.PrepareSession(rec, []string{"login", "both"},
				map[string]any{trace.SessionTenantID: tn, trace.SessionConversationID: convA})
			ctx := t.Context()
			assert.False(t, llmtoolkit.Execute(ctx, session, llmtoolkit.Call{Name: "login", Arguments: map[string]any{"user": "ada"}}).IsError)
			assert.True(t, llmtoolkit.Execute(ctx, session, llmtoolkit.Call{Name: "login", Arguments: map[string]any{"user": 1.0}}).IsError)
			assert.False(t, llmtoolkit.Execute(ctx, session, llmtoolkit.Call{Name: "both"}).IsError)
		}
		assert.Equal(t, trace.Stats{Recorded: 10}, rec.Stats(), "nothing dropped")
		for i, tbl := range s.tables {
			got, err := trace.List(t.Context(), s.db, trace.Filter{}, trace.WithTable(tbl))
			require.NoError(t, err)
			var names []string
			for _, r := range got {
				assert.Equal(t, tenants[i], r.TenantID, tbl)
				names = append(names, r.ToolName+"/"+r.ResultType)
			}
			assert.ElementsMatch(t, []string{"login/ok", "login/error", "both/ok", "login/ok", "echo/ok"}, names, tbl)
		}
	})
}
