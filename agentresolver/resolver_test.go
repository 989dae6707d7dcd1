package agentresolver_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// valueHandler is a handler value with a fixed definition that records its
// calls.
type valueHandler struct {
	def       llmtoolkit.Tool
	sensitive []string
	fn        func(ctx context.Context, args map[string]any) (string, error)
	calls     atomic.Int32
}

func (h *valueHandler) Definition() llmtoolkit.Tool { return h.def }

func (h *valueHandler) Execute(ctx context.Context, args map[string]any) (string, error) {
	h.calls.Add(1)
	if h.fn != nil {
		return h.fn(ctx, args)
	}
	return fmt.Sprint(args["text"]), nil
}

type sensitiveHandler struct{ *valueHandler }

func (h sensitiveHandler) SensitiveFields() []string { return h.sensitive }

var echoSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"text":  map[string]any{"type": "string"},
		"times": map[string]any{"type": "integer", "minimum": 1},
		"token": map[string]any{"type": "string"},
	},
	"required": []any{"text"},
}

func echo(name string) *valueHandler {
	return &valueHandler{def: llmtoolkit.Tool{Name: name, Description: "Echo the text.", Parameters: echoSchema}}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name     string
		handlers []agentresolver.Handler
		want     []string
	}{
		{"nil handler", []agentresolver.Handler{echo("a"), nil}, []string{"handler 2", "handler is nil"}},
		{"duplicate name", []agentresolver.Handler{echo("a"), echo("b"), echo("a")},
			[]string{"handler 3 (*agentresolver_test.valueHandler)", `tool name "a" is already used by handler 1`}},
		{"duplicate across Func and value", []agentresolver.Handler{echo("a"), agentresolver.Func("a", "d", noop[struct{}])},
			[]string{"handler 2", `"a" is already used by handler 1`}},
		{"bad name", []agentresolver.Handler{echo("no spaces")}, []string{"handler 1", "name must match"}},
		{"no description", []agentresolver.Handler{&valueHandler{def: llmtoolkit.Tool{Name: "a", Parameters: echoSchema}}},
			[]string{"handler 1", "description is empty"}},
		{"schema not an object", []agentresolver.Handler{&valueHandler{def: llmtoolkit.Tool{Name: "a", Description: "d", Parameters: map[string]any{"type": "string"}}}},
			[]string{"handler 1", `"type": "object"`}},
		{"schema does not compile", []agentresolver.Handler{&valueHandler{def: llmtoolkit.Tool{Name: "a", Description: "d",
			Parameters: map[string]any{"type": "object", "properties": map[string]any{"x": map[string]any{"type": 12}}}}}},
			[]string{"handler 1", "not valid JSON Schema"}},
		{"sensitive field not a property", []agentresolver.Handler{sensitiveHandler{&valueHandler{def: echo("a").def, sensitive: []string{"tokn"}}}},
			[]string{"handler 1", `sensitive field "tokn" is not an argument of the tool at any depth`}},
		{"sensitive option not a property", []agentresolver.Handler{agentresolver.Func("a", "d", noop[struct{ Key string }], agentresolver.WithSensitiveFields("kee"))},
			[]string{"handler 1", `sensitive field "kee" is not an argument of the tool at any depth`}},
		{"sensitive path typo", []agentresolver.Handler{agentresolver.Func("a", "d", noop[struct {
			Auth struct {
				Token string `json:"token"`
			} `json:"auth"`
		}], agentresolver.WithSensitiveFields("auth.tokn"))},
			[]string{"handler 1", `sensitive field "auth.tokn" is not an argument path of the tool`}},
		{"sensitive path through a scalar", []agentresolver.Handler{agentresolver.Func("a", "d", noop[struct{ Key string }], agentresolver.WithSensitiveFields("Key.x"))},
			[]string{"handler 1", `sensitive field "Key.x" is not an argument path`}},
		{"empty path segment", []agentresolver.Handler{agentresolver.Func("a", "d", noop[struct{ Key string }], agentresolver.WithSensitiveFields("Key..x"))},
			[]string{"handler 1", "empty path segment"}},
		{"broken Func under options", []agentresolver.Handler{agentresolver.WithOptions(agentresolver.Func("a", "d", noop[struct{ C chan int }]), agentresolver.WithReadOnly())},
			[]string{"handler 1", "chan values cannot be tool arguments"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := agentresolver.New(tc.handlers...)
			require.Error(t, err)
			assert.Nil(t, r)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestToolsOrderAndLookup(t *testing.T) {
	r, err := agentresolver.New(echo("zeta"), agentresolver.Func("alpha", "First letter.", noop[struct{}]), echo("mid"))
	require.NoError(t, err)
	var names []string
	for _, tool := range r.Tools() {
		names = append(names, tool.Name)
	}
	assert.Equal(t, []string{"zeta", "alpha", "mid"}, names)

	tool, ok := r.LookupTool("mid")
	require.True(t, ok)
	assert.Equal(t, "Echo the text.", tool.Description)
	_, ok = r.LookupTool("nope")
	assert.False(t, ok)

	empty, err := agentresolver.New()
	require.NoError(t, err)
	assert.Empty(t, empty.Tools())
}

func TestResolveValidatesBeforeHandler(t *testing.T) {
	h := echo("echo")
	r, err := agentresolver.New(h)
	require.NoError(t, err)
	ctx := context.Background()

	out, err := r.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "hi", "invented": 1.0}})
	require.NoError(t, err)
	assert.Equal(t, "hi", out)

	for _, tc := range []struct {
		name string
		args map[string]any
		want []string
	}{
		{"nil arguments", nil, []string{"missing properties: 'text'"}},
		{"each bad argument named", map[string]any{"text": 3.0, "times": 0.0}, []string{"/text: expected string", "/times: must be >= 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := h.calls.Load()
			_, err := r.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: tc.args})
			require.Error(t, err)
			assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)
			for _, w := range tc.want {
				assert.Contains(t, err.Error(), w)
			}
			assert.Equal(t, before, h.calls.Load(), "the handler must not run")
		})
	}
}

func TestResolveSession(t *testing.T) {
	var seen []map[string]any
	var mu sync.Mutex
	record := func(ctx context.Context) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, llmtoolkit.ScopeFrom(ctx).Session)
	}
	h := echo("who")
	h.fn = func(ctx context.Context, _ map[string]any) (string, error) { record(ctx); return "", nil }
	r, err := agentresolver.New(h, agentresolver.Func("typed", "Typed tool.", func(ctx context.Context, _ struct{}) (string, error) {
		record(ctx)
		return "", nil
	}))
	require.NoError(t, err)
	ctx := context.Background()

	_, err = r.ResolveWith(ctx, llmtoolkit.Call{Name: "who", Arguments: map[string]any{"text": "x"}}, map[string]any{"user": "ada"})
	require.NoError(t, err)
	_, err = r.ResolveWith(ctx, llmtoolkit.Call{Name: "typed"}, map[string]any{"user": "bob"})
	require.NoError(t, err)
	tools, resolve := llmtoolkit.PrepareSession(r, []string{"typed"}, map[string]any{"user": "cy"})
	require.Len(t, tools, 1)
	_, err = resolve.Resolve(ctx, llmtoolkit.Call{Name: "typed"})
	require.NoError(t, err)
	_, err = r.Resolve(ctx, llmtoolkit.Call{Name: "typed"})
	require.NoError(t, err)

	assert.Equal(t, []map[string]any{{"user": "ada"}, {"user": "bob"}, {"user": "cy"}, nil}, seen)
}

// captureLogs routes slog's default logger to a buffer for the test.
func captureLogs(t *testing.T) *syncBuffer {
	t.Helper()
	buf := &syncBuffer{}
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(buf, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	return buf
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestResolveRescuesPanics(t *testing.T) {
	logs := captureLogs(t)
	h := echo("boom")
	h.fn = func(context.Context, map[string]any) (string, error) { panic("kaboom") }
	r, err := agentresolver.New(h,
		agentresolver.Func("typed_boom", "Panics.", func(context.Context, struct{}) (string, error) { panic(errors.New("typed kaboom")) }),
		echo("fine"))
	require.NoError(t, err)
	ctx := context.Background()

	for _, tc := range []struct{ tool, want string }{
		{"boom", "tool execution failed: kaboom"},
		{"typed_boom", "tool execution failed: typed kaboom"},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			out, err := r.Resolve(ctx, llmtoolkit.Call{Name: tc.tool, Arguments: map[string]any{"text": "x"}})
			require.Error(t, err)
			assert.Empty(t, out)
			assert.EqualError(t, err, tc.want)
			assert.ErrorIs(t, err, llmtoolkit.ErrToolPanic)
			var pe *llmtoolkit.PanicError
			require.ErrorAs(t, err, &pe)
			assert.Contains(t, string(pe.Stack), "resolver_test.go")
			assert.Contains(t, logs.String(), "tool="+tc.tool)
			assert.Contains(t, logs.String(), "resolver_test.go", "the stack is logged")
		})
	}
	// The resolver keeps serving.
	out, err := r.Resolve(ctx, llmtoolkit.Call{Name: "fine", Arguments: map[string]any{"text": "still here"}})
	require.NoError(t, err)
	assert.Equal(t, "still here", out)

	// Through Execute too.
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "boom", Arguments: map[string]any{"text": "x"}})
	assert.True(t, res.IsError)
	assert.Equal(t, "tool execution failed: kaboom", res.Content)
}

func TestTimeout(t *testing.T) {
	waitForDeadline := func(ctx context.Context) (string, error) {
		if _, ok := ctx.Deadline(); !ok {
			return "", errors.New("no deadline")
		}
		select {
		case <-ctx.Done():
			return "", ctx.Err()
		case <-time.After(30 * time.Second):
			return "", errors.New("the deadline never came")
		}
	}
	slowValue := echo("slow_value")
	slowValue.fn = func(ctx context.Context, _ map[string]any) (string, error) { return waitForDeadline(ctx) }
	r, err := agentresolver.New(
		agentresolver.Func("slow_func", "Slow.", func(ctx context.Context, _ struct{}) (string, error) { return waitForDeadline(ctx) },
			agentresolver.WithTimeout(20*time.Millisecond)),
		agentresolver.WithOptions(slowValue, agentresolver.WithTimeout(20*time.Millisecond)),
		agentresolver.Func("no_timeout", "No deadline of its own.", func(ctx context.Context, _ struct{}) (string, error) {
			_, ok := ctx.Deadline()
			return fmt.Sprint(ok), nil
		}),
	)
	require.NoError(t, err)
	ctx := context.Background()
	for _, name := range []string{"slow_func", "slow_value"} {
		t.Run(name, func(t *testing.T) {
			_, err := r.Resolve(ctx, llmtoolkit.Call{Name: name, Arguments: map[string]any{"text": "x"}})
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		})
	}
	out, err := r.Resolve(ctx, llmtoolkit.Call{Name: "no_timeout"})
	require.NoError(t, err)
	assert.Equal(t, "false", out)
}

func TestResolveCancelledContext(t *testing.T) {
	h := echo("echo")
	r, err := agentresolver.New(h)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = r.Resolve(ctx, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
	assert.ErrorIs(t, err, context.Canceled)
	assert.Zero(t, h.calls.Load())
}

func TestUnknownTool(t *testing.T) {
	r, err := agentresolver.New(echo("echo"))
	require.NoError(t, err)
	_, err = r.Resolve(context.Background(), llmtoolkit.Call{Name: "nope"})
	assert.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
	assert.EqualError(t, err, "unknown tool: nope")

	// Compose passes an unknown call on to the next resolver.
	other := llmtoolkit.ResolverFunc(func(_ context.Context, call llmtoolkit.Call) (string, error) {
		return "other resolved " + call.Name, nil
	})
	out, err := llmtoolkit.Compose(r, other).Resolve(context.Background(), llmtoolkit.Call{Name: "nope"})
	require.NoError(t, err)
	assert.Equal(t, "other resolved nope", out)
}

func TestSensitiveFieldsOnTheDefinition(t *testing.T) {
	own := sensitiveHandler{&valueHandler{def: echo("own").def, sensitive: []string{"token"}}}
	r, err := agentresolver.New(
		own,
		agentresolver.WithOptions(own, agentresolver.WithSensitiveFields("text", "token")), // the same tool twice, even wrapped: refused
	)
	require.Error(t, err)
	assert.Nil(t, r)

	type loginArgs struct {
		User     string `json:"user"`
		Password string `json:"password"`
		Nested   struct {
			Secret string `json:"secret"`
		} `json:"nested"`
		Users []struct {
			PIN int `json:"pin"`
		} `json:"users"`
	}
	openSchema := llmtoolkit.Tool{Name: "open", Description: "Takes anything.", Parameters: map[string]any{"type": "object"}}
	declared := echo("declared").def
	declared.Name = "declared"
	declared.SensitiveFields = []string{"text"}
	r, err = agentresolver.New(
		own,
		agentresolver.WithOptions(echo("wrapped"), agentresolver.WithSensitiveFields("token")),
		agentresolver.WithOptions(sensitiveHandler{&valueHandler{def: echo("merged").def, sensitive: []string{"token"}}},
			agentresolver.WithSensitiveFields("text", "token")),
		agentresolver.Func("login", "Log in.", noop[loginArgs],
			agentresolver.WithSensitiveFields("password", "nested.secret", "SECRET", "users.pin")),
		agentresolver.WithOptions(&valueHandler{def: openSchema}, agentresolver.WithSensitiveFields("api_key", "auth.token")),
		&valueHandler{def: declared},
		echo("plain"),
	)
	require.NoError(t, err, "nested names, dotted paths through arrays and open schemas are accepted")
	for _, tc := range []struct {
		tool string
		want []string
	}{
		{"own", []string{"token"}},
		{"wrapped", []string{"token"}},
		{"merged", []string{"token", "text"}},
		{"login", []string{"password", "nested.secret", "SECRET", "users.pin"}},
		{"open", []string{"api_key", "auth.token"}},
		{"declared", []string{"text"}},
		{"plain", nil},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			tool, ok := r.LookupTool(tc.tool)
			require.True(t, ok)
			assert.Equal(t, tc.want, tool.SensitiveFields)
			// And through every wrapper, since they pass definitions on.
			for _, w := range []llmtoolkit.Resolver{llmtoolkit.Compose(r), llmtoolkit.Filter(r, func(llmtoolkit.Tool) bool { return true })} {
				for _, wt := range w.Tools() {
					if wt.Name == tc.tool {
						assert.Equal(t, tc.want, wt.SensitiveFields)
					}
				}
			}
			_, s := llmtoolkit.PrepareSession(r, []string{tc.tool}, nil)
			st, ok := s.LookupTool(tc.tool)
			require.True(t, ok)
			assert.Equal(t, tc.want, st.SensitiveFields)
		})
	}
}

func TestOptionsChangeDefinition(t *testing.T) {
	base := echo("opts")
	base.def.Metadata = map[string]any{"owner": "team-a"}
	base.def.Annotations = &llmtoolkit.Annotations{Idempotent: true}
	r, err := agentresolver.New(
		agentresolver.WithOptions(base, agentresolver.WithReadOnly(), agentresolver.WithOpenWorld(), agentresolver.WithMetadata(map[string]any{"cost": "low"})),
		agentresolver.Func("typed", "Typed.", noop[struct{}],
			agentresolver.WithAnnotations(llmtoolkit.Annotations{ReadOnly: true}), agentresolver.WithDestructive(), agentresolver.WithIdempotent(),
			agentresolver.WithMetadata(map[string]any{"a": 1}), agentresolver.WithMetadata(map[string]any{"a": 2, "b": 3})),
	)
	require.NoError(t, err)
	opts, _ := r.LookupTool("opts")
	assert.Equal(t, &llmtoolkit.Annotations{Idempotent: true, ReadOnly: true, OpenWorld: true}, opts.Annotations)
	assert.Equal(t, map[string]any{"owner": "team-a", "cost": "low"}, opts.Metadata)
	assert.Equal(t, map[string]any{"owner": "team-a"}, base.def.Metadata, "the handler's own map is not modified")
	assert.Equal(t, &llmtoolkit.Annotations{Idempotent: true}, base.def.Annotations)

	typed, _ := r.LookupTool("typed")
	assert.Equal(t, &llmtoolkit.Annotations{ReadOnly: true, Destructive: true, Idempotent: true}, typed.Annotations)
	assert.Equal(t, map[string]any{"a": 2, "b": 3}, typed.Metadata)
	assert.Nil(t, agentresolver.WithOptions(nil))
}

func TestExecuteIntegration(t *testing.T) {
	r, err := agentresolver.New(agentresolver.Func("weather", "Forecast.", weather))
	require.NoError(t, err)
	ctx := context.Background()
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "c1", Name: "weather", Arguments: map[string]any{"city": "Oslo"}})
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "1-day forecast for Oslo in celsius: sunny", res.Content)

	res = llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "c2", Name: "weather", Arguments: map[string]any{"city": 1.0}})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)

	res = llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: "c3", Name: "forecast"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrUnknownTool)
	assert.Contains(t, res.Content, "Available tools: weather")
}

// TestStatefulConcurrent runs the example's key-value store under many
// concurrent calls (run with -race).
func TestStatefulConcurrent(t *testing.T) {
	store := &kvStore{}
	counter := &counterHandler{}
	r, err := agentresolver.New(store.Handler(), counter)
	require.NoError(t, err)
	ctx := context.Background()
	const workers, each = 8, 50
	var wg sync.WaitGroup
	errs := make(chan error, workers*each*3)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("k%d-%d", w, i)
				if _, err := r.Resolve(ctx, llmtoolkit.Call{Name: "memory", Arguments: map[string]any{"op": "set", "key": key, "value": key}}); err != nil {
					errs <- err
				}
				if got, err := r.Resolve(ctx, llmtoolkit.Call{Name: "memory", Arguments: map[string]any{"op": "get", "key": key}}); err != nil || got != key {
					errs <- fmt.Errorf("get %s: %q, %v", key, got, err)
				}
				if _, err := r.Resolve(ctx, llmtoolkit.Call{Name: "count", Arguments: map[string]any{"by": 1.0}}); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	out, err := r.Resolve(ctx, llmtoolkit.Call{Name: "count", Arguments: map[string]any{"by": 0.0}})
	require.NoError(t, err)
	assert.Equal(t, fmt.Sprint(workers*each), out)
	store.mu.Lock()
	assert.Len(t, store.data, workers*each)
	store.mu.Unlock()
}

// counterHandler is a stateful handler value implementing Handler directly.
type counterHandler struct {
	mu sync.Mutex
	n  int
}

func (c *counterHandler) Definition() llmtoolkit.Tool {
	return llmtoolkit.MustTool("count", "Add to a counter and return its value.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"by": map[string]any{"type": "integer", "minimum": 0}},
		"required":   []any{"by"},
	})
}

func (c *counterHandler) Execute(_ context.Context, args map[string]any) (string, error) {
	by, _ := args["by"].(float64)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += int(by)
	return fmt.Sprint(c.n), nil
}

// TestHandlerPanicLogCarriesNoDeclaredSecret (issue 35, row 16): a typed
// handler that panics quoting its sensitive argument: the panic is logged
// with the value scrubbed (it was logged as it was).
func TestHandlerPanicLogCarriesNoDeclaredSecret(t *testing.T) {
	const secret = "hunter2-XYZ"
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	type login struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	r, err := agentresolver.New(agentresolver.Func("login", "Logs in.", func(_ context.Context, a login) (string, error) {
		panic("cannot log " + a.User + " in with " + a.Password)
	}, agentresolver.WithSensitiveFields("password")))
	require.NoError(t, err)
	res := llmtoolkit.Execute(t.Context(), r, llmtoolkit.Call{ID: "1", Name: "login", Arguments: map[string]any{"user": "ada", "password": secret}})
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
	assert.Contains(t, buf.String(), "tool panicked")
	assert.Contains(t, buf.String(), "cannot log ada in with [REDACTED]")
	assert.NotContains(t, buf.String(), secret)
}
