package trace_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// postgresDSNVar enables the PostgreSQL half of the suite.
const postgresDSNVar = "LLMTOOLKIT_TEST_POSTGRES_DSN"

// forEachDB runs fn against a fresh, migrated SQLite file and, when
// LLMTOOLKIT_TEST_POSTGRES_DSN is set, a fresh PostgreSQL schema.
func forEachDB(t *testing.T, fn func(t *testing.T, db *gorm.DB)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) { fn(t, openSQLite(t)) })
	t.Run("postgres", func(t *testing.T) { fn(t, openPostgres(t)) })
}

// openSQLite opens a migrated SQLite database in a temporary folder.
func openSQLite(tb testing.TB) *gorm.DB {
	tb.Helper()
	db, err := trace.OpenSQLite(filepath.Join(tb.TempDir(), "traces.db"))
	require.NoError(tb, err)
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.NoError(tb, trace.Migrate(db))
	return db
}

// openPostgres opens a migrated PostgreSQL database in a schema of its own,
// dropped at the end of the test, so that concurrent test runs against the
// same server never see each other's rows.
func openPostgres(tb testing.TB) *gorm.DB {
	tb.Helper()
	dsn := os.Getenv(postgresDSNVar)
	if dsn == "" {
		tb.Skip(postgresDSNVar + ` is not set: skipping the PostgreSQL tests (start one with: eval "$(bash scripts/postgres.sh)")`)
	}
	cfg := &gorm.Config{Logger: logger.Discard}
	admin, err := gorm.Open(postgres.Open(dsn), cfg)
	require.NoError(tb, err)
	schema := "trace_test_" + strings.ReplaceAll(uuid.NewString(), "-", "")
	require.NoError(tb, admin.Exec("CREATE SCHEMA "+schema).Error)
	db, err := trace.OpenPostgres(dsn + " search_path=" + schema)
	require.NoError(tb, err)
	tb.Cleanup(func() {
		if sqlDB, err := db.DB(); err == nil {
			_ = sqlDB.Close()
		}
		_ = admin.Exec("DROP SCHEMA " + schema + " CASCADE").Error
		if sqlDB, err := admin.DB(); err == nil {
			_ = sqlDB.Close()
		}
	})
	require.NoError(tb, trace.Migrate(db))
	return db
}

// count returns the number of rows of tool_traces.
func count(tb testing.TB, db *gorm.DB) int64 {
	tb.Helper()
	var n int64
	require.NoError(tb, db.Model(&trace.Trace{}).Count(&n).Error)
	return n
}

func postgresEnabled() bool { return os.Getenv(postgresDSNVar) != "" }
