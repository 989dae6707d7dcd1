package trace_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// flaky is a tool that fails its first call and succeeds after.
func flaky() (*llmtoolkittest.Fake, *atomic.Int64) {
	var n atomic.Int64
	tool := llmtoolkit.MustTool("pay", "Pays.", map[string]any{"type": "object", "properties": map[string]any{}})
	return (&llmtoolkittest.Fake{}).Add(tool, func(context.Context, llmtoolkit.Call) (string, error) {
		if n.Add(1) == 1 {
			return "", errors.New("the bank timed out")
		}
		return "paid", nil
	}), &n
}

// resultTypes counts the rows of a call id by result type ("" for no id).
func resultTypes(t *testing.T, db *gorm.DB, callID string) map[string]int {
	t.Helper()
	var rows []struct {
		ResultType string
		N          int
	}
	q := db.Raw(`SELECT result_type, count(*) AS n FROM tool_traces WHERE call_id = ? GROUP BY 1`, callID)
	if callID == "" {
		q = db.Raw(`SELECT result_type, count(*) AS n FROM tool_traces WHERE call_id IS NULL GROUP BY 1`)
	}
	require.NoError(t, q.Scan(&rows).Error)
	out := map[string]int{}
	for _, r := range rows {
		out[r.ResultType] = r.N
	}
	return out
}

// TestIdempotentCalls: with WithIdempotentCalls a call that runs again
// with the same id (a retry) leaves one completed row: its failed
// attempts keep theirs, a later success is not written, counted in
// Stats.Duplicates and logged. Calls without an id, and the same id in
// another iteration, are not deduplicated. Synchronous and WithAsync writes,
// SQLite and PostgreSQL.
func TestIdempotentCalls(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, trace.Migrate(db, trace.WithIdempotentCalls()))
		require.NoError(t, trace.Migrate(db, trace.WithIdempotentCalls()), "idempotent")
		for _, tc := range []struct {
			name string
			opts []trace.Option
		}{
			{"sync", nil},
			{"async, one row a statement", []trace.Option{trace.WithAsync(), trace.WithBatchSize(1)}},
			{"async, batched", []trace.Option{trace.WithAsync(), trace.WithFlushInterval(time.Second)}},
		} {
			name := strings.ReplaceAll(tc.name, " ", "-")
			t.Run(tc.name, func(t *testing.T) {
				var logs bytes.Buffer
				opts := append([]trace.Option{trace.WithIdempotentCalls(), trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}, tc.opts...)
				fake, runs := flaky()
				rec := trace.Record(fake, db, opts...)
				id := "key-" + name
				call := llmtoolkit.Call{ID: id, Name: "pay"}
				assert.True(t, llmtoolkit.Execute(convCtx(t, 2), rec, call).IsError, "the first attempt fails")
				for range 3 { // the retry, and two more whose answers were lost
					res := llmtoolkit.Execute(convCtx(t, 2), rec, call)
					require.False(t, res.IsError, res.Content)
				}
				res := llmtoolkit.Execute(convCtx(t, 3), rec, call) // another iteration: another call
				require.False(t, res.IsError, res.Content)
				for range 2 {
					res := llmtoolkit.Execute(convCtx(t, 2), rec, llmtoolkit.Call{Name: "pay"})
					require.False(t, res.IsError, res.Content)
				}
				require.NoError(t, rec.Close())
				assert.Equal(t, int64(7), runs.Load(), "every call ran: the rule is the audit's, not the tool's")
				assert.Equal(t, map[string]int{trace.ResultError: 1, trace.ResultOK: 2}, resultTypes(t, db, id),
					"the failed attempt, one success in iteration 2, one in iteration 3")
				assert.Equal(t, int64(2), rec.Stats().Duplicates)
				assert.Contains(t, logs.String(), "already recorded")
				if !strings.Contains(tc.name, "batched") { // a batch's log counts its rows
					assert.Contains(t, logs.String(), id)
				}
			})
		}
		assert.Equal(t, map[string]int{trace.ResultOK: 6}, resultTypes(t, db, ""), "calls without an id are all recorded")
	})
}

// TestIdempotentCallsNeedTheIndex: a Recorder given WithIdempotentCalls
// refuses the calls of a table Migrate did not give the unique index,
// before they run; Migrate refuses to add it over duplicates already
// there.
func TestIdempotentCallsNeedTheIndex(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		fake, runs := flaky()
		rec := trace.Record(fake, db, trace.WithIdempotentCalls(), trace.WithLogger(slog.New(slog.DiscardHandler)))
		res := llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{ID: "k", Name: "pay"})
		require.True(t, res.IsError)
		assert.ErrorIs(t, res.Err, trace.ErrNoTable)
		assert.Contains(t, res.Err.Error(), "trace.WithIdempotentCalls()")
		assert.Zero(t, runs.Load())
		require.NoError(t, rec.Close())

		plain := trace.Record(fake, db)
		for range 3 {
			llmtoolkit.Execute(convCtx(t, 0), plain, llmtoolkit.Call{ID: "k", Name: "pay"})
		}
		require.NoError(t, plain.Close())
		require.Error(t, trace.Migrate(db, trace.WithIdempotentCalls()), "two completed rows of k are there")
	})
}
