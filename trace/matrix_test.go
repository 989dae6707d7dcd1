package trace_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// The guarantees matrix: every way a user can wrap a resolver, with the
// Recorder inside or outside the wrappers, on every database, must keep
// every guarantee: validation before the tool runs, redaction at any depth
// and by dotted path, in arguments, results and errors, recipes run and
// traced with their steps linked, the loop's iteration recorded, exactly one
// row per call, and panics turned into results.

// Secrets the calls carry; none may be stored.
const (
	secretToken  = "tok-secret-1"
	secretToken2 = "tok-secret-2"
	secretPIN    = 4321
	badPIN       = 918273 // refused by the schema, echoed by the validator
	secretURL    = "https://ada:pa55word@example.com/x"
	secretStep   = "step-secret-3" // the argument of a step no session declares
)

// handler is a Handler value with a fixed definition.
type handler struct {
	def llmtoolkit.Tool
	fn  func(ctx context.Context, args map[string]any) (string, error)
}

func (h handler) Definition() llmtoolkit.Tool { return h.def }
func (h handler) Execute(ctx context.Context, args map[string]any) (string, error) {
	return h.fn(ctx, args)
}

// matrixTools returns the domain tools and a counter of login executions.
func matrixTools(t testing.TB) (llmtoolkit.Resolver, *atomic.Int64) {
	var logins atomic.Int64
	login := handler{
		def: llmtoolkit.Tool{Name: "login", Description: "Logs in.", Parameters: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"user": map[string]any{"type": "string"},
				"pin":  map[string]any{"type": "integer", "maximum": 65535},
				"auth": map[string]any{"type": "object", "properties": map[string]any{
					"token": map[string]any{"type": "string"}, "url": map[string]any{"type": "string"}}},
			},
			"required": []any{"user"},
		}},
		fn: func(_ context.Context, args map[string]any) (string, error) {
			logins.Add(1)
			auth, _ := args["auth"].(map[string]any)
			return fmt.Sprintf("welcome %v, token %v, pin %v, via %v", args["user"], auth["token"], args["pin"], auth["url"]), nil
		},
	}
	boom := handler{def: llmtoolkit.Tool{Name: "boom", Description: "Panics.", Parameters: map[string]any{"type": "object"}},
		fn: func(context.Context, map[string]any) (string, error) { panic("boom went the tool") }}
	echo := handler{def: llmtoolkit.Tool{Name: "echo", Description: "Echoes.", Parameters: map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
		fn: func(_ context.Context, args map[string]any) (string, error) { return fmt.Sprint(args["text"]), nil }}
	bothDef := llmtoolkit.Tool{Name: "both", Description: "Logs in, then echoes.", Parameters: map[string]any{"type": "object"},
		Recipe: func(map[string]any) llmtoolkit.Plan {
			return llmtoolkit.Plan{Serial: []llmtoolkit.Call{
				{Name: "login", Arguments: map[string]any{"user": "cy", "pin": 1234.0, "auth": map[string]any{"token": secretToken2}}},
				{Name: "echo", Arguments: map[string]any{"text": secretStep}},
			}}
		}}
	both := handler{def: bothDef, fn: func(context.Context, map[string]any) (string, error) {
		return "", fmt.Errorf("the recipe should have run")
	}}
	ro := agentresolver.WithReadOnly()
	r, err := agentresolver.New(
		agentresolver.WithOptions(login, ro, agentresolver.WithSensitiveFields("pin", "auth.token")),
		agentresolver.WithOptions(boom, ro), agentresolver.WithOptions(echo, ro, agentresolver.WithSensitiveFields("text")),
		agentresolver.WithOptions(both, ro),
	)
	require.NoError(t, err)
	return r, &logins
}

// logging is a wrapper written the way a user would: a struct embedding a
// Resolver that logs each call. It forwards nothing else.
type logging struct {
	llmtoolkit.Resolver
	mu  *sync.Mutex
	log *[]string
}

func (l logging) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	l.mu.Lock()
	*l.log = append(*l.log, call.Name)
	l.mu.Unlock()
	return l.Resolver.Resolve(ctx, call)
}

// other is an unrelated resolver to compose with.
var other = lt.NewFake(map[string]string{"unrelated": "u"})

// wrapper is one way of wrapping a resolver.
type wrapper struct {
	name string
	wrap func(r llmtoolkit.Resolver) llmtoolkit.Resolver
}

func wrappers() []wrapper {
	session := func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
		// echo is not declared: it runs only as a step of "both".
		_, s := llmtoolkit.PrepareSession(r, []string{"login", "boom", "both"}, map[string]any{"user": "matrix"})
		return s
	}
	var mu sync.Mutex
	var log []string
	return []wrapper{
		{"direct", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return r }},
		{"compose", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return llmtoolkit.Compose(r, other) }},
		{"compose reversed", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return llmtoolkit.Compose(other, r) }},
		{"filter", func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			return llmtoolkit.Filter(r, func(t llmtoolkit.Tool) bool { return t.Name != "unused" })
		}},
		{"read-only", llmtoolkit.ReadOnly},
		{"session", session},
		{"nested", func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			return session(llmtoolkit.Compose(other, llmtoolkit.ReadOnly(llmtoolkit.Compose(llmtoolkit.Filter(r, func(llmtoolkit.Tool) bool { return true })))))
		}},
		{"user wrapper", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return logging{Resolver: r, mu: &mu, log: &log} }},
		{"session inside", func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			return llmtoolkit.ReadOnly(llmtoolkit.Compose(other, llmtoolkit.Filter(session(r), func(llmtoolkit.Tool) bool { return true })))
		}},
	}
}

// TestGuaranteesMatrix runs every guarantee through every wrapper, with the
// Recorder inside and outside, through Execute and through agentloop.Run,
// on SQLite and PostgreSQL.
func TestGuaranteesMatrix(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		combos := 0
		for _, w := range wrappers() {
			for _, placement := range []string{"record inside", "record outside"} {
				for _, driver := range []string{"execute", "agentloop"} {
					name := w.name + "/" + placement + "/" + driver
					t.Run(name, func(t *testing.T) {
						combos++
						tools, logins := matrixTools(t)
						var r llmtoolkit.Resolver
						var rec *trace.Recorder
						if placement == "record inside" {
							rec = trace.Record(tools, db)
							r = w.wrap(rec)
						} else {
							rec = trace.Record(w.wrap(tools), db)
							r = rec
						}
						conv := uuid.NewString()
						ctx := trace.WithConversation(t.Context(), tenant, conv, 1)
						var results []llmtoolkit.Result
						if driver == "execute" {
							results = executeMatrixCalls(ctx, r)
						} else {
							results = loopMatrixCalls(t, ctx, r)
						}
						checkMatrix(t, db, conv, driver, results, logins)
						assert.Equal(t, trace.Stats{Recorded: 6}, rec.Stats())
					})
				}
			}
		}
		t.Logf("guarantees matrix: %d combinations", combos)
	})
}

// matrixCalls are the calls every combination makes.
func matrixCalls() []llmtoolkit.Call {
	return []llmtoolkit.Call{
		{ID: "c1", Name: "login", Arguments: map[string]any{"user": "ada", "pin": float64(secretPIN),
			"auth": map[string]any{"token": secretToken, "url": secretURL}}},
		{ID: "c2", Name: "login", Arguments: map[string]any{"user": "bob", "pin": float64(badPIN)}},
		{ID: "c3", Name: "boom", Arguments: map[string]any{}},
		{ID: "c4", Name: "both", Arguments: map[string]any{}},
	}
}

func executeMatrixCalls(ctx context.Context, r llmtoolkit.Resolver) []llmtoolkit.Result {
	ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(3) }) // as the loop would say
	var out []llmtoolkit.Result
	for _, c := range matrixCalls() {
		out = append(out, llmtoolkit.Execute(ctx, r, c))
	}
	return out
}

func loopMatrixCalls(t *testing.T, ctx context.Context, r llmtoolkit.Resolver) []llmtoolkit.Result {
	calls := matrixCalls()
	model := lt.NewScriptedModel(t, lt.CallTools(calls[0], calls[1]), lt.CallTools(calls[2]), lt.CallTools(calls[3]), lt.Reply("done"))
	var out []llmtoolkit.Result
	_, _, err := agentloop.Run(ctx, []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
		Resolver: r, Logger: discardLogger(), BreakerThreshold: -1,
		OnIteration: func(it agentloop.Iteration) { out = append(out, it.Results...) },
	})
	require.NoError(t, err)
	return out
}

func checkMatrix(t *testing.T, db *gorm.DB, conv, driver string, results []llmtoolkit.Result, logins *atomic.Int64) {
	t.Helper()
	require.Len(t, results, 4)
	// Results: the model sees what it should.
	assert.False(t, results[0].IsError, results[0].Content)
	assert.Contains(t, results[0].Content, secretToken, "the tool itself sees the real arguments")
	assert.ErrorIs(t, results[1].Err, llmtoolkit.ErrInvalidArguments, "validation before the tool runs")
	assert.ErrorIs(t, results[2].Err, llmtoolkit.ErrToolPanic, "a panic becomes a result")
	assert.False(t, results[3].IsError, results[3].Content)
	assert.Equal(t, "welcome cy, token tok-secret-2, pin 1234, via <nil>\n\n"+secretStep, results[3].Content, "the recipe ran its plan")
	assert.Equal(t, int64(2), logins.Load(), "the refused login never ran")

	rows, err := trace.List(context.Background(), db, trace.Filter{TenantID: tenant, ConversationID: conv})
	require.NoError(t, err)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[i] = r.ToolName
	}
	assert.ElementsMatch(t, []string{"login", "login", "boom", "login", "echo", "both"}, names, "exactly one row per call, steps included")

	// What a row stores of the call (its IDs are random hex and may hold any
	// digits).
	var payloads []any
	for _, r := range rows {
		payloads = append(payloads, r.ToolName, r.Arguments, r.Result)
	}
	stored, err := json.Marshal(payloads)
	require.NoError(t, err)
	for _, secret := range []string{secretToken, secretToken2, fmt.Sprint(secretPIN), fmt.Sprint(badPIN), "1234", "pa55word", secretStep} {
		assert.NotContains(t, string(stored), secret, "no secret is stored")
	}
	var parentID string
	for _, r := range rows {
		if r.ToolName == "both" {
			parentID = r.ID
			assert.Nil(t, r.ParentID)
		}
	}
	require.NotEmpty(t, parentID)
	for _, r := range rows {
		wantIteration := 3
		if driver == "agentloop" {
			wantIteration = map[string]int{"c1": 1, "c2": 1, "c3": 2}[callIDOf(r)]
			if r.ToolName == "both" || r.ParentID != nil {
				wantIteration = 3
			}
		}
		assert.Equal(t, wantIteration, r.Iteration, "%s: the loop's iteration is recorded", r.ToolName)
		switch {
		case r.ToolName == "echo" || (r.ToolName == "login" && r.Arguments["user"] == "cy"):
			require.NotNil(t, r.ParentID, "%s is a step of both", r.ToolName)
			assert.Equal(t, parentID, *r.ParentID)
		case r.ToolName == "login" && r.Arguments["user"] == "ada":
			assert.Equal(t, trace.ResultOK, r.ResultType)
			assert.Equal(t, trace.Redacted, r.Arguments["pin"], "a plain name at any depth")
			auth, _ := r.Arguments["auth"].(map[string]any)
			assert.Equal(t, trace.Redacted, auth["token"], "a dotted path")
			assert.Equal(t, "https://ada:[REDACTED]@example.com/x", auth["url"], "a URL's password")
			assert.Equal(t, "welcome ada, token [REDACTED], pin [REDACTED], via https://ada:[REDACTED]@example.com/x", r.Result["content"])
		case r.ToolName == "login":
			assert.Equal(t, trace.ResultError, r.ResultType)
			assert.Contains(t, r.Result["error"], "/pin: must be <= 65535 but found [REDACTED]", "a secret echoed in an error is scrubbed")
		case r.ToolName == "boom":
			assert.Equal(t, trace.ResultError, r.ResultType)
			assert.Contains(t, r.Result["error"], "boom went the tool")
		}
	}
}

// callIDOf finds which matrix call a row belongs to, from its arguments.
func callIDOf(r trace.Trace) string {
	switch {
	case r.ToolName == "login" && r.Arguments["user"] == "ada":
		return "c1"
	case r.ToolName == "login" && r.Arguments["user"] == "bob":
		return "c2"
	case r.ToolName == "boom":
		return "c3"
	}
	return "c4"
}

// TestSendFuncPanicWithRecorder: a panicking model ends the run with an
// error, not a crash, and leaves the rows already written, whatever wraps
// the tools.
func TestSendFuncPanicWithRecorder(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, w := range wrappers() {
			for _, placement := range []string{"record inside", "record outside"} {
				t.Run(w.name+"/"+placement, func(t *testing.T) {
					tools, _ := matrixTools(t)
					var r llmtoolkit.Resolver
					if placement == "record inside" {
						r = w.wrap(trace.Record(tools, db))
					} else {
						r = trace.Record(w.wrap(tools), db)
					}
					conv := uuid.NewString()
					turn := 0
					send := func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
						turn++
						if turn == 2 {
							panic("adapter bug")
						}
						return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "x", Name: "login", Arguments: map[string]any{"user": "once"}}}}, nil
					}
					var err error
					require.NotPanics(t, func() {
						_, _, err = agentloop.Run(trace.WithConversation(t.Context(), tenant, conv, 0), nil, send, agentloop.Options{Resolver: r, Logger: discardLogger()})
					})
					require.ErrorIs(t, err, agentloop.ErrModelPanic)
					assert.Contains(t, err.Error(), "adapter bug")
					var mpe *agentloop.ModelPanicError
					require.ErrorAs(t, err, &mpe)
					assert.Equal(t, "adapter bug", mpe.Value)
					rows, lerr := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
					require.NoError(t, lerr)
					require.Len(t, rows, 1)
					assert.Equal(t, 1, rows[0].Iteration)
				})
			}
		}
	})
}

// TestRecordCapsArguments: a 20 MiB argument does not become a 20 MiB row.
func TestRecordCapsArguments(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		fake := lt.NewFake(map[string]string{"write_file": "ok"})
		rec := trace.Record(fake, db, trace.WithMaxArgumentBytes(4096))
		big := strings.Repeat("x", 20<<20)
		res := llmtoolkit.Execute(convCtx(t, 0), rec, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": big}})
		require.False(t, res.IsError, res.Content)
		assert.Len(t, fake.CallsTo("write_file")[0].Arguments["content"], 20<<20, "the tool gets the whole argument")
		rows, err := trace.List(t.Context(), db, trace.Filter{ToolName: "write_file"})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		data, err := json.Marshal(rows[0].Arguments)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(data), 4096)
		assert.Equal(t, true, rows[0].Arguments["_truncated"])
		assert.Equal(t, float64(20<<20+len(`{"content":"","path":"a.txt"}`)), rows[0].Arguments["_bytes"])
		assert.Equal(t, "a.txt", rows[0].Arguments["path"], "short arguments are kept")
		assert.True(t, strings.HasSuffix(rows[0].Arguments["content"].(string), " bytes cut]"), "a cut string says so")
	})
}

// TestGuaranteesWithSessionMap: the README's pattern, where the tenant and
// the conversation come from the session map, not from the context. Calls
// Execute answers itself (refused by validation, recipe parents) and steps
// refused by the Session reach the Recorder with the session bound too, so
// every call still leaves its row, whatever wraps the Session.
func TestGuaranteesWithSessionMap(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		var mu sync.Mutex
		var log []string
		for _, w := range []wrapper{
			{"session", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return r }},
			{"composed session", func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return llmtoolkit.Compose(other, r) }},
			{"user wrapper around the session", func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
				return logging{Resolver: r, mu: &mu, log: &log}
			}},
		} {
			for _, driver := range []string{"execute", "agentloop"} {
				t.Run(w.name+"/"+driver, func(t *testing.T) {
					tools, logins := matrixTools(t)
					rec := trace.Record(tools, db, trace.WithLogger(discardLogger()))
					conv := uuid.NewString()
					// echo is not declared: it runs only as a step of "both".
					_, s := llmtoolkit.PrepareSession(rec, []string{"login", "boom", "both"},
						map[string]any{trace.SessionTenantID: tenant, trace.SessionConversationID: conv})
					r := w.wrap(s)
					var results []llmtoolkit.Result
					if driver == "execute" {
						results = executeMatrixCalls(t.Context(), r)
					} else {
						results = loopMatrixCalls(t, t.Context(), r)
					}
					checkMatrix(t, db, conv, driver, results, logins)
					assert.Equal(t, trace.Stats{Recorded: 6}, rec.Stats())
				})
			}
		}
	})
}

// TestSessionMapOutsideTheRecorder: a Recorder outside a Session does not
// see the session map (the Session binds it for what it wraps): without
// WithConversation its calls are refused, clearly, before the tool runs.
func TestSessionMapOutsideTheRecorder(t *testing.T) {
	tools, logins := matrixTools(t)
	_, s := llmtoolkit.PrepareSession(tools, []string{"login"},
		map[string]any{trace.SessionTenantID: tenant, trace.SessionConversationID: uuid.NewString()})
	rec := trace.Record(s, openSQLite(t), trace.WithLogger(discardLogger()))
	res := llmtoolkit.Execute(t.Context(), rec, llmtoolkit.Call{Name: "login", Arguments: map[string]any{"user": "ada"}})
	require.ErrorIs(t, res.Err, trace.ErrUnattributed)
	assert.ErrorContains(t, res.Err, "tenant_id is required", "the host reads what is missing")
	assert.Contains(t, res.Content, `"login" was not run`, "the model reads a neutral answer")
	assert.NotContains(t, res.Content, "trace.", "and no host configuration advice")
	assert.Zero(t, logins.Load(), "the tool did not run")
	assert.Equal(t, trace.Stats{Refused: 1}, rec.Stats())
}

// TestSessionMapStepRefusedLeavesRow: an undeclared recipe step refused by
// the Session (its arguments do not satisfy its own schema) leaves a row
// attributed through the session map.
func TestSessionMapStepRefusedLeavesRow(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		echo := handler{def: llmtoolkit.Tool{Name: "echo", Description: "Echoes.", Parameters: map[string]any{
			"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}},
			fn: func(_ context.Context, args map[string]any) (string, error) { return fmt.Sprint(args["text"]), nil }}
		bad := handler{def: llmtoolkit.Tool{Name: "bad", Description: "A recipe with a bad step.", Parameters: map[string]any{"type": "object"},
			Recipe: func(map[string]any) llmtoolkit.Plan {
				return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "echo", Arguments: map[string]any{"text": 7.0}}}}
			}}, fn: func(context.Context, map[string]any) (string, error) {
			return "", fmt.Errorf("the recipe should have run")
		}}
		tools, err := agentresolver.New(echo, bad)
		require.NoError(t, err)
		rec := trace.Record(tools, db, trace.WithLogger(discardLogger()))
		conv := uuid.NewString()
		_, s := llmtoolkit.PrepareSession(rec, []string{"bad"},
			map[string]any{trace.SessionTenantID: tenant, trace.SessionConversationID: conv})
		res := llmtoolkit.Execute(t.Context(), s, llmtoolkit.Call{Name: "bad"})
		require.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
		rows, err := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
		require.NoError(t, err)
		names := make([]string, len(rows))
		for i, r := range rows {
			names[i] = r.ToolName + "/" + r.ResultType
		}
		assert.ElementsMatch(t, []string{"echo/error", "bad/error"}, names)
		assert.Equal(t, trace.Stats{Recorded: 2}, rec.Stats())
	})
}

// TestHTTPGetURLPasswordsNotStored: whatever form of URL the model gives
// http_get, its password is stored neither in the arguments nor in the
// error (the refused forms included, which Go's parser reads without a
// password but a browser would not).
func TestHTTPGetURLPasswordsNotStored(t *testing.T) {
	code, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	t.Cleanup(func() { _ = code.Close() })
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		rec := trace.Record(code, db, trace.WithStrict())
		conv := uuid.NewString()
		ctx := trace.WithConversation(t.Context(), tenant, conv, 0)
		urls := []string{
			"gopher://ada:s3cr3t@example.com/x", "http://ada:s3cr3t@host:bad/", "http://ada:s3cr3t@exa mple.com/",
			"http:ada:s3cr3t@host", `http:\\ada:s3cr3t@host`, "HTTP:///ada:s3cr3t@host/x",
		}
		for _, u := range urls {
			res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": u}})
			require.True(t, res.IsError, u)
			assert.NotContains(t, res.Content, "s3cr3t", u)
		}
		rows, err := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
		require.NoError(t, err)
		require.Len(t, rows, len(urls))
		for _, r := range rows {
			stored, err := json.Marshal([]any{r.Arguments, r.Result})
			require.NoError(t, err)
			assert.NotContains(t, string(stored), "s3cr3t")
		}
	})
}

// TestRefusedUndeclaredStepRedacted: a Recorder outside a Session records
// an undeclared recipe step that the Session refuses (its arguments break
// its own schema, and the refusal quotes the secret) without storing the
// step's secret.
func TestRefusedUndeclaredStepRedacted(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		pin := handler{def: llmtoolkit.Tool{Name: "pin", Description: "Checks a PIN.", Parameters: map[string]any{
			"type": "object", "properties": map[string]any{"code": map[string]any{"type": "integer", "maximum": 9999}}}},
			fn: func(context.Context, map[string]any) (string, error) { return "ok", nil }}
		bad := handler{def: llmtoolkit.Tool{Name: "bad", Description: "A recipe with a bad step.", Parameters: map[string]any{"type": "object"},
			Recipe: func(map[string]any) llmtoolkit.Plan {
				return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "pin", Arguments: map[string]any{"code": float64(badPIN)}}}}
			}}, fn: func(context.Context, map[string]any) (string, error) {
			return "", fmt.Errorf("the recipe should have run")
		}}
		tools, err := agentresolver.New(agentresolver.WithOptions(pin, agentresolver.WithSensitiveFields("code")), bad)
		require.NoError(t, err)
		_, s := llmtoolkit.PrepareSession(tools, []string{"bad"}, nil)
		rec := trace.Record(s, db)
		conv := uuid.NewString()
		res := llmtoolkit.Execute(trace.WithConversation(t.Context(), tenant, conv, 0), rec, llmtoolkit.Call{Name: "bad"})
		require.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
		rows, err := trace.List(t.Context(), db, trace.Filter{ConversationID: conv})
		require.NoError(t, err)
		require.Len(t, rows, 2)
		stored, err := json.Marshal([]any{rows[0].Arguments, rows[0].Result, rows[1].Arguments, rows[1].Result})
		require.NoError(t, err)
		assert.NotContains(t, string(stored), fmt.Sprint(badPIN))
		assert.Contains(t, string(stored), "9999 but found [REDACTED]")
	})
}
