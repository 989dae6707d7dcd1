package trace_test

import (
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit"
	sqlite "github.com/llmtoolkit/llmtoolkit/internal/sqlitegorm"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestSQLiteSyncWriteBoundedWhileLocked: a synchronous write to a SQLite
// database another connection holds locked fails within its bound, on
// each of its paths: the database's busy timeout when it is the shorter
// (the write then has no context that ends), the write timeout when it is
// shorter than the busy timeout, and when the pool's only connection is
// taken. The row is not lost silently: the call fails under WithStrict,
// and the failure is counted.
func TestSQLiteSyncWriteBoundedWhileLocked(t *testing.T) {
	const bound = 300 * time.Millisecond
	for _, tc := range []struct {
		name    string
		busyMS  int
		timeout time.Duration // 0: the default, 10 s
		maxOpen int
	}{
		{"busy timeout shorter than the write timeout", 300, 0, 0},
		{"write timeout shorter than the busy timeout", 10000, bound, 0},
		{"the pool's one connection taken", 10000, bound, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dsn := filepath.Join(t.TempDir(), "traces.db") + "?_pragma=journal_mode(WAL)&_pragma=busy_timeout(" + strconv.Itoa(tc.busyMS) + ")"
			db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
			require.NoError(t, err)
			sqlDB, err := db.DB()
			require.NoError(t, err)
			defer sqlDB.Close()
			require.NoError(t, trace.Migrate(db))
			opts := []trace.Option{trace.WithStrict(), trace.WithDefaultConversation(tenant, convA), trace.WithLogger(slog.New(slog.DiscardHandler))}
			if tc.timeout > 0 {
				opts = append(opts, trace.WithWriteTimeout(tc.timeout))
			}
			rec := trace.Record(echo(), db, opts...)
			// One call written first: the table is checked and the busy
			// timeout read while nothing holds the database.
			_, err = rec.Resolve(t.Context(), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 0}})
			require.NoError(t, err)

			if tc.maxOpen > 0 {
				sqlDB.SetMaxOpenConns(tc.maxOpen)
			}
			conn, err := sqlDB.Conn(t.Context())
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.ExecContext(t.Context(), "BEGIN IMMEDIATE")
			require.NoError(t, err)
			defer func() { _, _ = conn.ExecContext(t.Context(), "ROLLBACK") }()

			start := time.Now()
			_, err = rec.Resolve(t.Context(), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
			took := time.Since(start)
			require.Error(t, err, "the row could not be written: the strict call fails")
			assert.Equal(t, int64(1), rec.Stats().Failed)
			assert.Less(t, took, 3*time.Second, "a write waited %s while the database was locked (bound %s)", took, bound)
		})
	}
}
