package trace_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// benchResolver answers at once and keeps nothing, so that the benchmarks
// measure the recorder, not the tool.
type benchResolver struct{}

var benchTools = []llmtoolkit.Tool{llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{
	"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}},
})}

func (benchResolver) Tools() []llmtoolkit.Tool { return benchTools }
func (benchResolver) Resolve(context.Context, llmtoolkit.Call) (string, error) {
	return "package main\n\nfunc main() {}\n", nil
}

var benchCall = llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "cmd/main.go", "offset": 1, "limit": 200}}

func benchDBs(b *testing.B, fn func(b *testing.B, db *gorm.DB)) {
	b.Run("sqlite", func(b *testing.B) { fn(b, openSQLite(b)) })
	b.Run("postgres", func(b *testing.B) { fn(b, openPostgres(b)) })
}

// BenchmarkRecordOverhead measures one call: direct, and through a
// synchronous Recorder; the difference is the overhead Record adds (goal:
// under 1 ms on SQLite in WAL mode).
func BenchmarkRecordOverhead(b *testing.B) {
	b.Run("direct", func(b *testing.B) {
		ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
		var r benchResolver
		for b.Loop() {
			if _, err := r.Resolve(ctx, benchCall); err != nil {
				b.Fatal(err)
			}
		}
	})
	benchDBs(b, func(b *testing.B, db *gorm.DB) {
		ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
		rec := trace.Record(benchResolver{}, db, trace.WithStrict())
		for b.Loop() {
			if _, err := rec.Resolve(ctx, benchCall); err != nil {
				b.Fatal(err)
			}
		}
	})
	// WithSharedSecrets: one indexed read of the conversation's secrets
	// per row (one secret kept by an earlier call).
	b.Run("shared_secrets", func(b *testing.B) {
		benchDBs(b, func(b *testing.B, db *gorm.DB) {
			key := make([]byte, trace.SharedSecretsKeySize)
			if err := trace.Migrate(db, trace.WithSharedSecrets(key)); err != nil {
				b.Fatal(err)
			}
			ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
			rec := trace.Record(benchResolver{}, db, trace.WithStrict(), trace.WithSharedSecrets(key), trace.WithRedactFields("path"))
			if _, err := rec.Resolve(ctx, benchCall); err != nil {
				b.Fatal(err)
			}
			call := llmtoolkit.Call{Name: benchCall.Name, Arguments: map[string]any{"offset": 1, "limit": 200}}
			for b.Loop() {
				if _, err := rec.Resolve(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
	// WithIdempotentCalls: each call has its own id, so every row is
	// written; the difference is the unique index and ON CONFLICT.
	b.Run("idempotent", func(b *testing.B) {
		benchDBs(b, func(b *testing.B, db *gorm.DB) {
			if err := trace.Migrate(db, trace.WithIdempotentCalls()); err != nil {
				b.Fatal(err)
			}
			ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
			rec := trace.Record(benchResolver{}, db, trace.WithStrict(), trace.WithIdempotentCalls())
			call := benchCall
			n := 0
			for b.Loop() {
				n++
				call.ID = "call_" + strconv.Itoa(n)
				if _, err := rec.Resolve(ctx, call); err != nil {
					b.Fatal(err)
				}
			}
		})
	})
}

// BenchmarkAsyncThroughput measures traces per second with WithAsync batching,
// Close (the final flush) included (goal: over 20,000 per second on SQLite);
// idempotent: with WithIdempotentCalls, each call with its own id.
func BenchmarkAsyncThroughput(b *testing.B) {
	benchDBs(b, func(b *testing.B, db *gorm.DB) { asyncThroughput(b, db, false) })
	b.Run("idempotent", func(b *testing.B) {
		benchDBs(b, func(b *testing.B, db *gorm.DB) { asyncThroughput(b, db, true) })
	})
}

func asyncThroughput(b *testing.B, db *gorm.DB, idempotent bool) {
	ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
	opts := []trace.Option{trace.WithAsync()}
	if idempotent {
		if err := trace.Migrate(db, trace.WithIdempotentCalls()); err != nil {
			b.Fatal(err)
		}
		opts = append(opts, trace.WithIdempotentCalls())
	}
	rec := trace.Record(benchResolver{}, db, opts...)
	var ids atomic.Int64
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			call := benchCall
			if idempotent {
				call.ID = "call_" + strconv.FormatInt(ids.Add(1), 10)
			}
			if _, err := rec.Resolve(ctx, call); err != nil {
				b.Error(err)
				return
			}
		}
	})
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "traces/s")
	if n := count(b, db); n != int64(b.N) {
		b.Fatalf("%d rows for %d calls", n, b.N)
	}
}

// BenchmarkRecordOverheadTenantTable measures the same call written to a
// tenant's table chosen per call by WithTableFrom (SQLite: a plain table;
// PostgreSQL: a schema of its own).
func BenchmarkRecordOverheadTenantTable(b *testing.B) {
	run := func(b *testing.B, db *gorm.DB, tbl string) {
		if err := trace.Migrate(db, trace.WithTable(tbl)); err != nil {
			b.Fatal(err)
		}
		ctx := trace.WithConversation(context.Background(), tenant, convA, 0)
		rec := trace.Record(benchResolver{}, db, trace.WithStrict(),
			trace.WithTableFrom(func(context.Context) (string, error) { return tbl, nil }))
		for b.Loop() {
			if _, err := rec.Resolve(ctx, benchCall); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("sqlite", func(b *testing.B) { run(b, openSQLite(b), "tenant_a_traces") })
	b.Run("postgres", func(b *testing.B) {
		db, schemas := postgresSchemas(b, 1)
		run(b, db, schemas[0]+".tool_traces")
	})
}
