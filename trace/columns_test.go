package trace_test

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// hostileTexts are strings a model, a tool or a host can put in any text
// column: each must still leave exactly one row, on either database.
var hostileTexts = map[string]string{
	"nul":          "a\x00b",
	"invalid utf8": "a\xffb\xc3",
	"9 KiB":        strings.Repeat("n", 9<<10),
	"100 KiB":      strings.Repeat("ä", 50<<10),
	"mixed":        "\x00\xff" + strings.Repeat("\x00é\xfe", 4000),
	"only nul":     "\x00",
}

// TestHostileStringsInEveryColumn: a hostile string in the tool name (an
// invented tool), the agent id, an argument's key and value, the result's
// content and the error text leaves one row per call, synchronously and
// asynchronously; the tool name and the agent id are cleaned and capped.
func TestHostileStringsInEveryColumn(t *testing.T) {
	columns := []string{"tool_name", "agent_id", "argument key", "argument value", "content", "error"}
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, async := range []bool{false, true} {
			f := &llmtoolkittest.Fake{}
			f.Handle("answer", func(_ context.Context, c llmtoolkit.Call) (string, error) {
				s, _ := c.Arguments["s"].(string)
				if c.Arguments["fail"] == true {
					return "", fmt.Errorf("failed: %s", s)
				}
				return s, nil
			})
			opts := []trace.Option{trace.WithDefaultConversation(tenant, convA)}
			if async {
				opts = append(opts, trace.WithAsync())
			}
			rec := trace.Record(f, db, opts...)
			calls := 0
			for name, s := range hostileTexts {
				for _, col := range columns {
					ctx := t.Context()
					call := llmtoolkit.Call{Name: "answer", Arguments: map[string]any{"s": "x"}}
					switch col {
					case "tool_name":
						call.Name = s
					case "agent_id":
						ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = s })
					case "argument key":
						call.Arguments = map[string]any{s: "v"}
					case "argument value", "content":
						call.Arguments = map[string]any{"s": s}
					case "error":
						call.Arguments = map[string]any{"s": s, "fail": true}
					}
					_, _ = rec.Resolve(ctx, call)
					calls++
					if !async {
						require.Equal(t, int64(0), rec.Stats().Failed, "%s in %s", name, col)
					}
				}
			}
			require.NoError(t, rec.Close())
			assert.Equal(t, trace.Stats{Recorded: int64(calls)}, rec.Stats())
		}
		rows, err := trace.List(t.Context(), db, trace.Filter{})
		require.NoError(t, err)
		require.Len(t, rows, 2*len(hostileTexts)*len(columns), "one row per call")
		for _, r := range rows {
			for _, text := range []string{r.ToolName, deref(r.AgentID)} {
				assert.LessOrEqual(t, len(text), trace.MaxTextBytes+32)
				assert.NotContains(t, text, "\x00")
				assert.True(t, strings.ToValidUTF8(text, "") == text)
			}
		}
	})
}

func deref(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// TestNewCleansTextColumns: New cleans and caps the tool name and the agent
// id, marking a cut.
func TestNewCleansTextColumns(t *testing.T) {
	tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: strings.Repeat("x", 10<<10) + "\x00", ResultType: trace.ResultOK, AgentID: "a\xffb\x00"})
	require.NoError(t, err)
	assert.Equal(t, "a\uFFFDb\uFFFD", *tr.AgentID)
	assert.LessOrEqual(t, len(tr.ToolName), trace.MaxTextBytes+32)
	assert.True(t, strings.HasSuffix(tr.ToolName, " bytes cut]"), tr.ToolName[len(tr.ToolName)-40:])
}

// TestAsyncCloseBoundedWhenTheDatabaseHangs: with every insert hanging, Close
// takes about one write timeout per batch, not one per row.
func TestAsyncCloseBoundedWhenTheDatabaseHangs(t *testing.T) {
	db := openPostgres(t)
	const rows, timeout = 30, 200 * time.Millisecond
	// Another session holds the table: every insert waits.
	sqlDB, err := db.DB()
	require.NoError(t, err)
	conn, err := sqlDB.Conn(t.Context())
	require.NoError(t, err)
	defer conn.Close()
	tx, err := conn.BeginTx(t.Context(), &sql.TxOptions{})
	require.NoError(t, err)
	defer func() { _ = tx.Rollback() }()
	_, err = tx.Exec(`LOCK TABLE tool_traces IN ACCESS EXCLUSIVE MODE`)
	require.NoError(t, err)

	rec := trace.Record(echo(), db, trace.WithAsync(), trace.WithBatchSize(rows), trace.WithFlushInterval(time.Hour),
		trace.WithWriteTimeout(timeout), trace.WithDefaultConversation(tenant, convA))
	for i := range rows {
		_, err := rec.Resolve(t.Context(), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": i}})
		require.NoError(t, err)
	}
	start := time.Now()
	err = rec.Close()
	took := time.Since(start)
	require.Error(t, err)
	assert.Equal(t, int64(rows), rec.Stats().Failed)
	assert.Less(t, took, 4*timeout, "Close took %s for %d rows with a %s write timeout", took, rows, timeout)
}

// TestSQLiteDefaultTableIsMain: with a tenant's database attached and no
// table in the main one, a plain Record and List never reach the tenant's
// table.
func TestSQLiteDefaultTableIsMain(t *testing.T) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "main.db"))
	require.NoError(t, err)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	sqlDB.SetMaxOpenConns(1)
	defer sqlDB.Close()
	require.NoError(t, db.Exec(`ATTACH DATABASE ? AS first_1`, filepath.Join(t.TempDir(), "first.db")).Error)
	require.NoError(t, trace.Migrate(db, trace.WithTable("first_1.tool_traces")))

	rec := trace.Record(echo(), db, trace.WithDefaultConversation(tenant, convA))
	_, err = rec.Resolve(t.Context(), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
	assert.ErrorIs(t, err, trace.ErrNoTable, "no table in main: refused, not written to first_1's")
	assert.Equal(t, int64(1), rec.Stats().Refused)
	_, err = trace.List(t.Context(), db, trace.Filter{})
	assert.Error(t, err, "no table in main: List fails")
	got, err := trace.List(t.Context(), db, trace.Filter{}, trace.WithTable("first_1.tool_traces"))
	require.NoError(t, err)
	assert.Empty(t, got, "the tenant's table was not written")
}

// TestMigrateNeverReportsAMissingIndex: an index name taken by another
// relation is an error, not a silent success.
func TestMigrateNeverReportsAMissingIndex(t *testing.T) {
	t.Run("postgres", func(t *testing.T) {
		db, schemas := postgresSchemas(t, 1)
		s := schemas[0]
		require.NoError(t, trace.Migrate(db, trace.WithTable(s+".acme_tool_name_index")))
		err := trace.Migrate(db, trace.WithTable(s+".acme"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "acme_tool_name_index")
	})
	t.Run("sqlite", func(t *testing.T) {
		db := openSQLite(t)
		require.NoError(t, trace.Migrate(db, trace.WithTable("acme_tool_name_index")))
		err := trace.Migrate(db, trace.WithTable("acme"))
		require.Error(t, err)
		assert.Contains(t, err.Error(), "acme_tool_name_index")
	})
}

// TestConcurrentMigrateOfOneNewTable: tenants migrated lazily, many at once.
func TestConcurrentMigrateOfOneNewTable(t *testing.T) {
	run := func(t *testing.T, db *gorm.DB, tbl string) {
		const n = 8
		var wg sync.WaitGroup
		errs := make([]error, n)
		for i := range n {
			wg.Go(func() { errs[i] = trace.Migrate(db, trace.WithTable(tbl)) })
		}
		wg.Wait()
		for _, err := range errs {
			assert.NoError(t, err)
		}
	}
	t.Run("postgres", func(t *testing.T) {
		db, schemas := postgresSchemas(t, 1)
		for i := range 3 {
			run(t, db, fmt.Sprintf("%s.lazy_%d", schemas[0], i))
		}
	})
	t.Run("sqlite", func(t *testing.T) {
		db := openSQLite(t)
		for i := range 3 {
			run(t, db, fmt.Sprintf("lazy_%d", i))
		}
	})
}

// TestSQLiteTableNamesDifferingByCase: SQLite ignores case in names, so a
// name that differs from an existing table's only by case is refused by
// Migrate and by a Recorder instead of sharing its table.
func TestSQLiteTableNamesDifferingByCase(t *testing.T) {
	db := openSQLite(t)
	require.NoError(t, trace.Migrate(db, trace.WithTable("tenant_a")))
	err := trace.Migrate(db, trace.WithTable("Tenant_A"))
	require.ErrorIs(t, err, trace.ErrInvalidTable)
	assert.Contains(t, err.Error(), "case")

	rec := trace.Record(echo(), db, trace.WithTable("Tenant_A"), trace.WithDefaultConversation(tenant, convA))
	_, err = rec.Resolve(t.Context(), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
	require.ErrorIs(t, err, trace.ErrInvalidTable)
	got, err := trace.List(t.Context(), db, trace.Filter{}, trace.WithTable("tenant_a"))
	require.NoError(t, err)
	assert.Empty(t, got)
}
