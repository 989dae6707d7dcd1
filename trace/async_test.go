package trace_test

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"strings"
	"sync"
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

// echo is a resolver whose tool "echo" answers "out-N" for {"n": N}.
func echo() *llmtoolkittest.Fake {
	f := &llmtoolkittest.Fake{}
	return f.Handle("echo", func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return fmt.Sprintf("out-%v", c.Arguments["n"]), nil
	})
}

// writerStops asserts that no async writer goroutine is alive: at once,
// or a moment later (the writer signals Close on its way out, so its last
// frame may still be on the stack when Close returns).
func writerStops(t *testing.T, msg ...any) {
	t.Helper()
	assert.Eventually(t, func() bool { return !writerRunning() }, 2*time.Second, time.Millisecond, msg...)
}

// writerRunning reports whether an async writer goroutine is alive.
func writerRunning() bool {
	buf := make([]byte, 1<<20)
	buf = buf[:runtime.Stack(buf, true)]
	return strings.Contains(string(buf), "trace.(*Recorder).run")
}

func TestAsyncRecordsEveryCall(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		const goroutines, calls = 16, 10000
		// A small queue, so that callers do wait for the writer (back-pressure).
		rec := trace.Record(echo(), db, trace.WithAsync(), trace.WithQueueSize(64), trace.WithBatchSize(500))
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; i < calls; i += goroutines {
					ctx := trace.WithConversation(t.Context(), tenant, convA, i)
					out, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": i}})
					if !assert.NoError(t, err) || !assert.Equal(t, fmt.Sprintf("out-%d", i), out) {
						return
					}
				}
			}()
		}
		wg.Wait()
		require.NoError(t, rec.Close())
		writerStops(t, "Close stops the writer goroutine")

		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, got, calls)
		seen := make([]bool, calls)
		for _, g := range got {
			n := g.Iteration
			require.False(t, seen[n], "iteration %d recorded twice", n)
			seen[n] = true
			require.Equal(t, trace.JSON{"n": float64(n)}, g.Arguments)
			require.Equal(t, trace.JSON{"content": fmt.Sprintf("out-%d", n)}, g.Result)
			require.Equal(t, "echo", g.ToolName)
			require.Equal(t, trace.ResultOK, g.ResultType)
		}
	})
}

func TestAsyncCloseFlushesAndResolveAfterCloseWritesNow(t *testing.T) {
	db := openSQLite(t)
	// A long interval: only Close can flush these in time.
	rec := trace.Record(echo(), db, trace.WithAsync(), trace.WithFlushInterval(time.Hour))
	for i := range 3 {
		_, err := rec.Resolve(convCtx(t, i), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": i}})
		require.NoError(t, err)
	}
	require.NoError(t, rec.Close())
	assert.EqualValues(t, 3, count(t, db))
	require.NoError(t, rec.Close(), "Close is idempotent")

	_, err := rec.Resolve(convCtx(t, 3), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 3}})
	require.NoError(t, err)
	assert.EqualValues(t, 4, count(t, db), "written synchronously after Close")
	writerStops(t)
}

func TestAsyncReportsFailedWrites(t *testing.T) {
	unmigrated := refusingDB(t)
	var fails failures
	rec := trace.Record(echo(), unmigrated, trace.WithAsync(), trace.WithOnError(fails.add), trace.WithLogger(discardLogger()))
	for i := range 5 {
		_, err := rec.Resolve(convCtx(t, i), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": i}})
		require.NoError(t, err, "an async failure never fails the call")
	}
	err := rec.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "5 trace(s) could not be written")
	assert.Equal(t, 5, fails.len())
	assert.Equal(t, trace.Stats{Recorded: 5, Failed: 5}, rec.Stats(), "queued, then counted as failed")
}

func TestAsyncOneBadTraceDoesNotLoseTheBatch(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		// The database refuses the traces of the tool "bad".
		if db.Dialector.Name() == "postgres" {
			require.NoError(t, db.Exec(`CREATE FUNCTION reject_bad() RETURNS trigger LANGUAGE plpgsql AS $$
				BEGIN IF NEW.tool_name = 'bad' THEN RAISE EXCEPTION 'bad tool'; END IF; RETURN NEW; END $$`).Error)
			require.NoError(t, db.Exec(`CREATE TRIGGER reject_bad BEFORE INSERT ON tool_traces
				FOR EACH ROW EXECUTE FUNCTION reject_bad()`).Error)
		} else {
			require.NoError(t, db.Exec(`CREATE TRIGGER reject_bad BEFORE INSERT ON tool_traces
				WHEN NEW.tool_name = 'bad' BEGIN SELECT RAISE(ABORT, 'bad tool'); END`).Error)
		}
		fake := echo()
		fake.Returns("bad", "fine")

		var fails failures
		rec := trace.Record(fake, db, trace.WithAsync(), trace.WithFlushInterval(time.Hour),
			trace.WithOnError(fails.add), trace.WithLogger(discardLogger()))
		for i := range 5 {
			name := "echo"
			if i == 2 {
				name = "bad"
			}
			_, err := rec.Resolve(convCtx(t, i), llmtoolkit.Call{Name: name, Arguments: map[string]any{"n": i}})
			require.NoError(t, err)
		}
		err := rec.Close()
		require.Error(t, err)
		assert.Contains(t, err.Error(), "1 trace(s) could not be written")
		assert.Contains(t, err.Error(), "bad tool")
		assert.EqualValues(t, 4, count(t, db), "the rest of the batch is written")
		require.Equal(t, 1, fails.len())
		assert.Equal(t, "bad", fails.traces[0].ToolName)
	})
}

func TestSyncConcurrentWriters(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		const goroutines, calls = 16, 40
		rec := trace.Record(echo(), db, trace.WithStrict())
		var wg sync.WaitGroup
		for g := range goroutines {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range calls {
					n := g*calls + i
					_, err := rec.Resolve(convCtx(t, n), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": n}})
					if !assert.NoError(t, err) {
						return
					}
				}
			}()
		}
		wg.Wait()
		assert.EqualValues(t, goroutines*calls, count(t, db))
	})
}

// panickingPool is a connection pool whose statements panic while
// panicking is set, as a broken driver would.
type panickingPool struct {
	gorm.ConnPool
	panicking *atomic.Bool
}

func (p panickingPool) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	if p.panicking.Load() {
		panic("driver exploded")
	}
	return p.ConnPool.PrepareContext(ctx, query)
}

func (p panickingPool) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if p.panicking.Load() {
		panic("driver exploded")
	}
	return p.ConnPool.ExecContext(ctx, query, args...)
}

// TestAsyncWriterSurvivesAPanic: a panic while writing a batch (here the
// driver's) fails that batch's rows, counted and reported once, and the
// writer goes on: the next batch is written and Close returns. A WithOnError
// that panics in turn is logged and leaves the host alive.
func TestAsyncWriterSurvivesAPanic(t *testing.T) {
	for _, panickingOnError := range []bool{false, true} {
		t.Run(fmt.Sprintf("WithOnError panics %v", panickingOnError), func(t *testing.T) {
			db := openSQLite(t)
			var panicking atomic.Bool
			db.Config.ConnPool = panickingPool{ConnPool: db.Config.ConnPool, panicking: &panicking}
			var fails failures
			rec := trace.Record(echo(), db, trace.WithAsync(), trace.WithFlushInterval(time.Millisecond),
				trace.WithOnError(func(tr *trace.Trace, err error) {
					fails.add(tr, err)
					if panickingOnError {
						panic("WithOnError bug")
					}
				}), trace.WithLogger(discardLogger()))
			panicking.Store(true)
			_, err := rec.Resolve(convCtx(t, 1), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 1}})
			require.NoError(t, err, "a panic checking the table is the write's to report")
			require.NoError(t, err)
			require.Eventually(t, func() bool { return rec.Stats().Failed == 1 }, 5*time.Second, time.Millisecond)
			panicking.Store(false)
			_, err = rec.Resolve(convCtx(t, 2), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"n": 2}})
			require.NoError(t, err)
			err = rec.Close()
			require.Error(t, err, "Close reports the lost trace")
			assert.Contains(t, err.Error(), "driver exploded")
			assert.Equal(t, 1, fails.len(), "WithOnError was told once")
			assert.Equal(t, int64(1), rec.Stats().Failed)
			assert.Equal(t, int64(1), count(t, db), "the batch after the panic is written")
		})
	}
}
