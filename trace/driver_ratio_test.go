package trace_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// The driver-ratio measurements (issue: the audit trail at the driver's
// speed) run only when asked: LLMTOOLKIT_TRACE_RATIO=1 (bench/trace.sh sets
// it). Each round times the same number of calls through a synchronous,
// WithStrict Recorder and raw prepared INSERTs of the same row through the same
// driver and connection pool, interleaved, and prints the medians and their
// ratio.
const ratioVar = "LLMTOOLKIT_TRACE_RATIO"

func TestDriverRatioSync(t *testing.T) {
	if os.Getenv(ratioVar) == "" {
		t.Skip(ratioVar + " is not set: run bash bench/trace.sh")
	}
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		const rounds, calls = 7, 400
		ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
		rec := trace.Record(benchResolver{}, db, trace.WithStrict())
		raw := newRawInserter(t, db)
		var recorded, driver, recordedCPU, driverCPU []float64
		for range rounds {
			start, cpu := time.Now(), cpuTime(t)
			for range calls {
				if _, err := rec.Resolve(ctx, benchCall); err != nil {
					t.Fatal(err)
				}
			}
			recordedCPU = append(recordedCPU, float64((cpuTime(t)-cpu).Microseconds())/calls)
			recorded = append(recorded, float64(time.Since(start).Microseconds())/calls)
			start, cpu = time.Now(), cpuTime(t)
			for range calls {
				raw.insert(t)
			}
			driverCPU = append(driverCPU, float64((cpuTime(t)-cpu).Microseconds())/calls)
			driver = append(driver, float64(time.Since(start).Microseconds())/calls)
		}
		r, d := median(recorded), median(driver)
		rc, dc := median(recordedCPU), median(driverCPU)
		fmt.Printf("%s sync: Record %.1f µs/call, raw prepared INSERT %.1f µs/row, ratio %.2f×; CPU (this process) %.1f and %.1f µs, ratio %.2f× (medians of %d rounds of %d)\n",
			db.Dialector.Name(), r, d, r/d, rc, dc, rc/dc, rounds, calls)
	})
}

func TestDriverRatioAsync(t *testing.T) {
	if os.Getenv(ratioVar) == "" {
		t.Skip(ratioVar + " is not set: run bash bench/trace.sh")
	}
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		const rounds, calls = 5, 5000
		ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
		raw := newRawInserter(t, db)
		var recorded, driver, recordedCPU, driverCPU []float64
		for range rounds {
			start, cpu := time.Now(), cpuTime(t)
			rec := trace.Record(benchResolver{}, db, trace.WithAsync())
			for range calls {
				if _, err := rec.Resolve(ctx, benchCall); err != nil {
					t.Fatal(err)
				}
			}
			require.NoError(t, rec.Close())
			recordedCPU = append(recordedCPU, calls/(cpuTime(t)-cpu).Seconds())
			recorded = append(recorded, calls/time.Since(start).Seconds())
			start, cpu = time.Now(), cpuTime(t)
			raw.batch(t, calls, 100)
			driverCPU = append(driverCPU, calls/(cpuTime(t)-cpu).Seconds())
			driver = append(driver, calls/time.Since(start).Seconds())
		}
		r, d := median(recorded), median(driver)
		rc, dc := median(recordedCPU), median(driverCPU)
		fmt.Printf("%s async: Record %.0f rows/s, the driver's batched INSERT %.0f rows/s, ratio %.2f×; per CPU second (this process) %.0f and %.0f rows, ratio %.2f× (medians of %d rounds of %d)\n",
			db.Dialector.Name(), r, d, r/d, rc, dc, rc/dc, rounds, calls)
	})
}

// cpuTime is the CPU time (user and system) this process used so far: the
// figure the machine's load changes least.
func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

// rawInserter writes the row a Recorder writes for benchCall with
// database/sql alone: the driver's own cost of the row.
type rawInserter struct {
	db         *sql.DB
	stmt       *sql.Stmt
	postgres   bool
	args, res  string
	insertHead string
}

func newRawInserter(t *testing.T, db *gorm.DB) *rawInserter {
	sqlDB, err := db.DB()
	require.NoError(t, err)
	args, err := json.Marshal(benchCall.Arguments)
	require.NoError(t, err)
	res, err := json.Marshal(map[string]any{"content": "package main\n\nfunc main() {}\n"})
	require.NoError(t, err)
	r := &rawInserter{db: sqlDB, postgres: db.Dialector.Name() == "postgres", args: string(args), res: string(res),
		insertHead: `INSERT INTO tool_traces (id, tenant_id, conversation_id, tool_name, arguments, result, result_type, duration_ms, iteration, inserted_at, parent_id, agent_id, call_id) VALUES `}
	r.stmt, err = sqlDB.Prepare(r.insertHead + r.values(0))
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.stmt.Close() })
	return r
}

// values is the VALUES tuple of the row at index i of a statement.
func (r *rawInserter) values(i int) string {
	ph := make([]string, 13)
	for j := range ph {
		ph[j] = "?"
		if r.postgres {
			ph[j] = fmt.Sprintf("$%d", i*13+j+1)
		}
	}
	return "(" + strings.Join(ph, ", ") + ")"
}

func (r *rawInserter) row() []any {
	return []any{uuid.Must(uuid.NewV7()).String(), tenant, convA, "read_file", r.args, r.res, "ok", int64(0), 0,
		time.Now().UTC().Truncate(time.Microsecond), nil, nil, nil}
}

func (r *rawInserter) insert(t *testing.T) {
	if _, err := r.stmt.Exec(r.row()...); err != nil {
		t.Fatal(err)
	}
}

// batch inserts n rows, per rows at a time in one multi-row statement, all
// in one transaction: the fastest the driver stores many rows.
func (r *rawInserter) batch(t *testing.T, n, per int) {
	var tuples []string
	for i := range per {
		tuples = append(tuples, r.values(i))
	}
	tx, err := r.db.Begin()
	require.NoError(t, err)
	stmt, err := tx.Prepare(r.insertHead + strings.Join(tuples, ", "))
	require.NoError(t, err)
	args := make([]any, 0, per*13)
	for done := 0; done < n; done += per {
		args = args[:0]
		for range per {
			args = append(args, r.row()...)
		}
		if _, err := stmt.Exec(args...); err != nil {
			t.Fatal(err)
		}
	}
	require.NoError(t, stmt.Close())
	require.NoError(t, tx.Commit())
}
