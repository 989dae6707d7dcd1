package trace_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// Record every call of a resolver into an embedded SQLite file, then list
// the conversation's traces.
func ExampleRecord() {
	dir, _ := os.MkdirTemp("", "traces")
	defer os.RemoveAll(dir)
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := trace.Migrate(db); err != nil {
		fmt.Println(err)
		return
	}

	tools := llmtoolkittest.NewFake(map[string]string{"login": "welcome, bob"})
	rec := trace.Record(tools, db, trace.WithRedactFields("password"))
	defer rec.Close()

	ctx := trace.WithConversation(context.Background(),
		"0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f", "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718", 1)
	res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{Name: "login",
		Arguments: map[string]any{"user": "bob", "password": "hunter2"}})
	fmt.Println(res.Content)

	traces, err := trace.List(ctx, db, trace.Filter{ConversationID: "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718"})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range traces {
		fmt.Println(t.ToolName, t.ResultType, t.Iteration, t.Arguments, t.Result)
	}
	// Output:
	// welcome, bob
	// login ok 1 map[password:[REDACTED] user:bob] map[content:welcome, bob]
}

// Build a trace by hand: New validates it and names every bad field.
func ExampleNew() {
	_, err := trace.New(trace.Attrs{TenantID: "acme", ToolName: "grep", ResultType: "done", DurationMS: -1})
	fmt.Println(err)
	// Output:
	// trace: invalid trace: tenant_id must be a UUID like 123e4567-e89b-12d3-a456-426614174000 (got "acme"); conversation_id is required (a UUID); result_type must be "ok" or "error" (got "done"); duration_ms must not be negative (got -1)
}

// One Recorder writes each tenant's calls to the tenant's own table, picked
// from the session (on PostgreSQL, a schema per tenant:
// "tenant_42.tool_traces").
func ExampleWithTableFrom() {
	dir, _ := os.MkdirTemp("", "traces")
	defer os.RemoveAll(dir)
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	tables := map[string]string{
		"0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f": "acme_traces",
		"11111111-2222-4333-8444-555555555555": "globex_traces",
	}
	for _, table := range tables {
		if err := trace.Migrate(db, trace.WithTable(table)); err != nil { // one call per new tenant
			fmt.Println(err)
			return
		}
	}
	byTenant := trace.WithTableFrom(func(ctx context.Context) (string, error) {
		tenant, _ := llmtoolkit.ScopeFrom(ctx).Session[trace.SessionTenantID].(string)
		if table, ok := tables[tenant]; ok {
			return table, nil
		}
		return "", fmt.Errorf("unknown tenant %q", tenant)
	})
	rec := trace.Record(llmtoolkittest.NewFake(map[string]string{"ping": "pong"}), db, byTenant)
	defer rec.Close()

	for tenant := range tables {
		ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) {
			sc.Session = map[string]any{
				trace.SessionTenantID: tenant, trace.SessionConversationID: "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718",
			}
		})
		llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{Name: "ping"})
	}
	traces, err := trace.List(context.Background(), db, trace.Filter{}, trace.WithTable("globex_traces"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range traces {
		fmt.Println(t.TenantID, t.ToolName)
	}

	_, err = trace.List(context.Background(), db, trace.Filter{}, trace.WithTable("x; DROP TABLE acme_traces"))
	fmt.Println(errors.Is(err, trace.ErrInvalidTable))
	// Output:
	// 11111111-2222-4333-8444-555555555555 ping
	// true
}

// Record a retried call once: the second run of call "pay-1" (its answer
// was lost, the caller retried) leaves no second row; it is counted and
// logged.
func ExampleWithIdempotentCalls() {
	dir, _ := os.MkdirTemp("", "traces")
	defer os.RemoveAll(dir)
	db, err := trace.OpenSQLite(filepath.Join(dir, "traces.db"))
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := trace.Migrate(db, trace.WithIdempotentCalls()); err != nil {
		fmt.Println(err)
		return
	}
	tools := llmtoolkittest.NewFake(map[string]string{"pay": "paid"})
	rec := trace.Record(tools, db, trace.WithIdempotentCalls(), trace.WithLogger(slog.New(slog.DiscardHandler)))
	ctx := trace.WithConversation(context.Background(),
		"0b6d3c1e-3f4a-4c2b-9f1e-1a2b3c4d5e6f", "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718", 0)
	for range 2 {
		llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: "pay-1", Name: "pay"})
	}
	if err := rec.Close(); err != nil {
		fmt.Println(err)
		return
	}
	traces, err := trace.List(ctx, db, trace.Filter{ConversationID: "5f0c2a9e-8d7b-4e6f-a1b2-c3d4e5f60718", CallID: "pay-1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(traces), "row;", rec.Stats().Duplicates, "duplicate skipped")
	// Output:
	// 1 row; 1 duplicate skipped
}
