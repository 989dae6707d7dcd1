package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// secretive is a fake resolver whose definitions name sensitive fields and
// carry a recipe, like agentresolver's and a user's do.
type secretive struct {
	*llmtoolkittest.Fake
	tools []llmtoolkit.Tool
}

func (s secretive) Tools() []llmtoolkit.Tool { return s.tools }

func newSecretive() secretive {
	f := llmtoolkittest.NewFake(map[string]string{"read_file": "package a", "login": "welcome"})
	f.Fails("fail", errors.New("boom"))
	s := secretive{Fake: f}
	for _, t := range f.Tools() {
		if t.Name == "login" {
			t.SensitiveFields = []string{"password", "token"}
		}
		if t.Name == "read_file" {
			t.Paths = &llmtoolkit.PathArguments{Names: []string{"path"}, Canonical: func(_ context.Context, _, v string) (string, error) { return v, nil }}
		}
		s.tools = append(s.tools, t)
	}
	both := llmtoolkit.MustTool("both", "Reads a and b.", nil)
	both.Recipe = func(args map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Parallel: []llmtoolkit.Call{
			{Name: "read_file", Arguments: map[string]any{"path": "a"}},
			{Name: "read_file", Arguments: map[string]any{"path": "b"}},
		}}
	}
	s.tools = append(s.tools, both)
	return s
}

func convCtx(t *testing.T, iteration int) context.Context {
	return trace.WithConversation(t.Context(), tenant, convA, iteration)
}

func TestRecord(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		fake := newSecretive()
		rec := trace.Record(fake, db, trace.WithRedactFields("api_key"))
		defer func() { require.NoError(t, rec.Close()) }()
		require.Len(t, rec.Tools(), len(fake.Tools()))
		for i, tool := range rec.Tools() {
			assert.Equal(t, fake.Tools()[i].Name, tool.Name)
			assert.Equal(t, fake.Tools()[i].SensitiveFields, tool.SensitiveFields)
			assert.Same(t, fake.Tools()[i].Paths, tool.Paths, "the path declaration travels")
		}
		ctx := convCtx(t, 2)

		res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.go"}})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "package a", res.Content)

		_, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "fail", Arguments: map[string]any{}})
		assert.EqualError(t, err, "boom")

		args := map[string]any{
			"user": "bob", "PassWord": "hunter2", "api_key": "k",
			"nested": map[string]any{"token": map[string]any{"deep": "t"},
				"list": []any{map[string]any{"password": "p", "keep": 1}, "x", []any{map[string]any{"API_KEY": "z"}}}},
		}
		out, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "login", Arguments: args})
		require.NoError(t, err)
		assert.Equal(t, "welcome", out)
		assert.Equal(t, "hunter2", args["PassWord"], "the caller's arguments are untouched")
		assert.Equal(t, "hunter2", fake.CallsTo("login")[0].Arguments["PassWord"], "the tool sees the real arguments")

		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, got, 3)
		byTool := map[string]trace.Trace{}
		for _, g := range got {
			byTool[g.ToolName] = g
			assert.Equal(t, tenant, g.TenantID)
			assert.Equal(t, convA, g.ConversationID)
			assert.Equal(t, 2, g.Iteration)
			assert.GreaterOrEqual(t, g.DurationMS, int64(0))
		}
		assert.Equal(t, trace.ResultOK, byTool["read_file"].ResultType)
		assert.Equal(t, trace.JSON{"path": "a.go"}, byTool["read_file"].Arguments)
		assert.Equal(t, trace.JSON{"content": "package a", "paths": []any{"a.go"}}, byTool["read_file"].Result)
		assert.Equal(t, trace.ResultError, byTool["fail"].ResultType)
		assert.Equal(t, trace.JSON{"error": "boom"}, byTool["fail"].Result)
		assert.Equal(t, trace.JSON{
			"user": "bob", "PassWord": "[REDACTED]", "api_key": "[REDACTED]",
			"nested": map[string]any{"token": "[REDACTED]",
				"list": []any{map[string]any{"password": "[REDACTED]", "keep": float64(1)}, "x",
					[]any{map[string]any{"API_KEY": "[REDACTED]"}}}},
		}, byTool["login"].Arguments)
	})
}

func TestRecordPassesDefinitionsOn(t *testing.T) {
	db := openSQLite(t)
	fake := newSecretive()
	rec := trace.Record(fake, db, trace.WithRedactFields("api_key"))

	tool, ok := rec.LookupTool("login")
	require.True(t, ok)
	assert.Equal(t, []string{"password", "token"}, tool.SensitiveFields)
	require.Len(t, tool.Observers, 1, "the recorder observes the tools it lists")
	assert.Same(t, rec, tool.Observers[0])
	_, ok = rec.LookupTool("nope")
	assert.False(t, ok)
	both, ok := rec.LookupTool("both")
	require.True(t, ok)
	assert.NotNil(t, both.Recipe)
	for _, inner := range fake.Tools() {
		assert.Empty(t, inner.Observers, "the wrapped definitions are not changed")
	}

	// A recipe's calls come back through the recorder and are traced, and
	// so is the recipe call, its steps linked to it.
	res := llmtoolkit.Execute(convCtx(t, 0), llmtoolkit.Compose(rec), llmtoolkit.Call{Name: "both"})
	require.False(t, res.IsError, res.Content)
	parents, err := trace.List(t.Context(), db, trace.Filter{ToolName: "both"})
	require.NoError(t, err)
	require.Len(t, parents, 1)
	steps, err := trace.List(t.Context(), db, trace.Filter{ParentID: parents[0].ID})
	require.NoError(t, err)
	assert.Len(t, steps, 2)
	for _, st := range steps {
		assert.Equal(t, "read_file", st.ToolName)
	}
}

func TestRecordSessionFallback(t *testing.T) {
	db := openSQLite(t)
	rec := trace.Record(newSecretive(), db)
	session := map[string]any{"tenant_id": tenant2, "conversation_id": convB, "iteration": float64(7)}
	ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.Session = session })
	_, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "read_file"})
	require.NoError(t, err)
	// WithConversation wins over the session.
	_, err = rec.Resolve(trace.WithConversation(ctx, tenant, convA, 1), llmtoolkit.Call{Name: "read_file"})
	require.NoError(t, err)
	// PrepareSession binds the session the same way.
	_, fn := llmtoolkit.PrepareSession(rec, []string{"read_file"}, session)
	_, err = fn.Resolve(t.Context(), llmtoolkit.Call{Name: "read_file"})
	require.NoError(t, err)

	got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant2, ConversationID: convB})
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, 7, got[0].Iteration)
	got, err = trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, 1, got[0].Iteration)
}

func TestRecordTruncatesLongResults(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		long := strings.Repeat("é", 10) // 20 bytes
		fake := llmtoolkittest.NewFake(map[string]string{"big": long, "small": "ok"})
		fake.Fails("bigerr", errors.New(long))
		rec := trace.Record(fake, db, trace.WithMaxResultBytes(7))
		ctx := convCtx(t, 0)
		for _, name := range []string{"big", "small", "bigerr"} {
			out, _ := rec.Resolve(ctx, llmtoolkit.Call{Name: name})
			if name == "big" {
				assert.Equal(t, long, out, "the caller gets the whole result")
			}
		}
		got, err := trace.List(t.Context(), db, trace.Filter{})
		require.NoError(t, err)
		byTool := map[string]trace.JSON{}
		for _, g := range got {
			byTool[g.ToolName] = g.Result
		}
		assert.Equal(t, trace.JSON{"content": "ééé", "truncated": true, "content_bytes": float64(20)}, byTool["big"])
		assert.Equal(t, trace.JSON{"content": "ok"}, byTool["small"])
		assert.Equal(t, trace.JSON{"error": "ééé", "truncated": true, "error_bytes": float64(20)}, byTool["bigerr"])
	})
}

func TestRecordPanicsAreRecorded(t *testing.T) {
	db := openSQLite(t)
	fake := llmtoolkittest.NewFake(nil)
	fake.Handle("explode", func(context.Context, llmtoolkit.Call) (string, error) { panic("kaboom") })
	rec := trace.Record(fake, db)
	res := llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{Name: "explode"})
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
	got, err := trace.List(t.Context(), db, trace.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, trace.ResultError, got[0].ResultType)
	assert.Equal(t, trace.JSON{"error": "panic: kaboom"}, got[0].Result)
}

func TestRecordWritesTracesOfCancelledCalls(t *testing.T) {
	db := openSQLite(t)
	ctx, cancel := context.WithCancel(convCtx(t, 0))
	fake := llmtoolkittest.NewFake(nil)
	fake.Handle("slow", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	_, err := trace.Record(fake, db, trace.WithStrict()).Resolve(ctx, llmtoolkit.Call{Name: "slow"})
	require.ErrorIs(t, err, context.Canceled)
	assert.NotContains(t, err.Error(), "recorded")
	got, err := trace.List(t.Context(), db, trace.Filter{})
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, trace.JSON{"error": "context canceled"}, got[0].Result)
}

// failures collects what WithOnError receives.
type failures struct {
	mu     sync.Mutex
	traces []*trace.Trace
	errs   []error
}

func (f *failures) add(t *trace.Trace, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.traces = append(f.traces, t)
	f.errs = append(f.errs, err)
}

func (f *failures) len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errs)
}

func TestRecordFailurePolicy(t *testing.T) {
	unmigrated := refusingDB(t) // every write fails

	t.Run("default: logged, reported, call succeeds", func(t *testing.T) {
		var logs bytes.Buffer
		var fails failures
		fake := newSecretive()
		rec := trace.Record(fake, unmigrated, trace.WithOnError(fails.add),
			trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		out, err := rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
		require.NoError(t, err)
		assert.Equal(t, "package a", out)
		require.Equal(t, 1, fails.len())
		assert.Equal(t, "read_file", fails.traces[0].ToolName)
		assert.ErrorContains(t, fails.errs[0], "the database refuses every row")
		assert.Contains(t, logs.String(), "could not be recorded")
		assert.Contains(t, logs.String(), "tool=read_file")
		assert.Equal(t, trace.Stats{Failed: 1}, rec.Stats(), "counted")
		err = rec.Close()
		require.Error(t, err, "Close reports the write that failed")
		assert.ErrorContains(t, err, "1 trace(s) could not be written")
	})

	t.Run("default: a call without IDs is refused before it runs", func(t *testing.T) {
		var logs bytes.Buffer
		fake := newSecretive()
		rec := trace.Record(fake, openSQLite(t), trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		_, err := rec.Resolve(t.Context(), llmtoolkit.Call{Name: "read_file"})
		require.ErrorIs(t, err, trace.ErrUnattributed)
		assert.ErrorContains(t, err, "tenant_id")
		assert.ErrorContains(t, err, "trace.WithConversation")
		assert.Empty(t, fake.Calls(), "the tool did not run")
		assert.Equal(t, trace.Stats{Refused: 1}, rec.Stats())
		assert.Contains(t, logs.String(), "could not be attributed")
	})

	t.Run("best effort: the tool runs, the dropped row is counted and logged", func(t *testing.T) {
		var logs bytes.Buffer
		fake := newSecretive()
		rec := trace.Record(fake, openSQLite(t), trace.WithBestEffort(), trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
		out, err := rec.Resolve(t.Context(), llmtoolkit.Call{Name: "read_file"})
		require.NoError(t, err)
		assert.Equal(t, "package a", out)
		assert.Len(t, fake.Calls(), 1)
		assert.Equal(t, trace.Stats{Dropped: 1}, rec.Stats())
		assert.Contains(t, logs.String(), "row was dropped")
	})

	t.Run("default conversation", func(t *testing.T) {
		db := openSQLite(t)
		rec := trace.Record(newSecretive(), db, trace.WithDefaultConversation(tenant, convB))
		_, err := rec.Resolve(t.Context(), llmtoolkit.Call{Name: "read_file"})
		require.NoError(t, err)
		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convB})
		require.NoError(t, err)
		assert.Len(t, got, 1)
		assert.Equal(t, trace.Stats{Recorded: 1}, rec.Stats())
	})

	t.Run("strict: a failed write fails the call", func(t *testing.T) {
		var fails failures
		rec := trace.Record(newSecretive(), unmigrated, trace.WithStrict(), trace.WithOnError(fails.add),
			trace.WithLogger(discardLogger()))
		out, err := rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
		require.Error(t, err)
		assert.Empty(t, out)
		assert.ErrorContains(t, err, `the call to "read_file" ran but could not be recorded`)
		assert.Equal(t, 1, fails.len())

		_, err = rec.Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "fail"})
		assert.ErrorContains(t, err, "boom")
		assert.ErrorContains(t, err, "could not be recorded")
	})

	t.Run("a call with malformed IDs is not made", func(t *testing.T) {
		fake := newSecretive()
		rec := trace.Record(fake, openSQLite(t), trace.WithLogger(discardLogger()))
		ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) {
			sc.Session = map[string]any{"tenant_id": tenant, "conversation_id": "nope", "iteration": "x"}
		})
		_, err := rec.Resolve(ctx, llmtoolkit.Call{Name: "read_file"})
		require.ErrorIs(t, err, trace.ErrUnattributed)
		require.ErrorIs(t, err, trace.ErrInvalid)
		assert.ErrorContains(t, err, "conversation_id")
		assert.ErrorContains(t, err, "iteration")
		assert.Empty(t, fake.Calls())
	})

	t.Run("nil db and nil resolver", func(t *testing.T) {
		_, err := trace.Record(newSecretive(), nil, trace.WithStrict()).Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "read_file"})
		assert.ErrorContains(t, err, "nil *gorm.DB")
		_, err = trace.Record(nil, openSQLite(t)).Resolve(convCtx(t, 0), llmtoolkit.Call{Name: "x"})
		assert.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
	})
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

// TestMalformedCallSecretNotStored: a malformed call (its arguments cut
// off) to a tool with sensitive fields leaves a row whose error text
// quotes the raw arguments without the secret's value.
func TestMalformedCallSecretNotStored(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		rec := trace.Record(newSecretive(), db)
		call := llmtoolkit.MalformedCall("c1", "login", `{"user": "bob", "password": "hunter2-XYZ`, errors.New("unexpected end of JSON input"))
		res := llmtoolkit.Execute(convCtx(t, 1), rec, call)
		require.True(t, res.IsError)
		rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		data, err := json.Marshal(rows[0])
		require.NoError(t, err)
		stored := string(data)
		assert.NotContains(t, stored, "hunter2-XYZ")
		assert.Contains(t, stored, trace.Redacted)
	})
}

// refusingDB is a migrated SQLite database whose traces table refuses every
// insert, as a broken database would.
func refusingDB(t *testing.T) *gorm.DB {
	t.Helper()
	db := openSQLite(t)
	require.NoError(t, db.Exec(`CREATE TRIGGER refuse_all BEFORE INSERT ON tool_traces
		BEGIN SELECT RAISE(ABORT, 'the database refuses every row'); END`).Error)
	return db
}

// TestForgottenMigrate: a Recorder on a database without its table refuses
// the call before the tool runs, with an error that names trace.Migrate for
// the host and a neutral answer for the model; nothing is lost silently.
func TestForgottenMigrate(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []trace.Option
		want string
	}{
		{"default table", nil, "call trace.Migrate(db) once before recording"},
		{"named table", []trace.Option{trace.WithTable("audit")}, `call trace.Migrate(db, trace.WithTable("audit")) once before recording`},
		{"async", []trace.Option{trace.WithAsync()}, "call trace.Migrate(db) once before recording"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "empty.db"))
			require.NoError(t, err)
			fake := newSecretive()
			var logs bytes.Buffer
			rec := trace.Record(fake, db, append(tc.opts, trace.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))...)
			res := llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{Name: "read_file"})
			require.True(t, res.IsError)
			require.ErrorIs(t, res.Err, trace.ErrNoTable)
			assert.ErrorContains(t, res.Err, tc.want, "the host is told the fix")
			assert.Contains(t, res.Content, `"read_file" was not run`)
			assert.NotContains(t, res.Content, "trace.Migrate", "the model is not shown the host's configuration advice")
			assert.Empty(t, fake.Calls(), "the tool did not run")
			assert.Equal(t, trace.Stats{Refused: 1}, rec.Stats())
			assert.Contains(t, logs.String(), "does not exist")
			require.NoError(t, rec.Close())

			require.NoError(t, trace.Migrate(db, tc.opts...)) // Migrate reads WithTable alone
			rec = trace.Record(fake, db, tc.opts...)
			res = llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{Name: "read_file"})
			require.False(t, res.IsError, "after Migrate the call runs: %s", res.Content)
			require.NoError(t, rec.Close())
			assert.Equal(t, trace.Stats{Recorded: 1}, rec.Stats())
		})
	}
}
