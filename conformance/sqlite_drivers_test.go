package conformance_test

import (
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite" // registers the driver name "sqlite", as DBOS's driver does

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestTraceBesideOtherSQLiteDrivers: a program that imports trace and
// modernc.org/sqlite (and, with cgo, mattn/go-sqlite3: see
// sqlite_drivers_cgo_test.go) starts, and each driver works. trace used to
// link glebarez/go-sqlite, which registers "sqlite" too: the test binary
// panicked before any test ran (sql: Register called twice for driver
// sqlite).
func TestTraceBesideOtherSQLiteDrivers(t *testing.T) {
	dir := t.TempDir()
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	sqlDB, err := db.DB()
	require.NoError(t, err)
	t.Cleanup(func() { _ = sqlDB.Close() })

	for _, name := range sqlDrivers() {
		t.Run(name, func(t *testing.T) {
			other, err := sql.Open(name, filepath.Join(dir, name+".db"))
			require.NoError(t, err)
			t.Cleanup(func() { _ = other.Close() })
			_, err = other.Exec("create table t (x integer)")
			require.NoError(t, err)
			var n int
			require.NoError(t, other.QueryRow("select count(*) from t").Scan(&n))
		})
	}
}
