package llmtoolkit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestExecute(t *testing.T) {
	echoTool := MustTool("echo", "Echoes text.", objectSchema(map[string]any{"text": map[string]any{"type": "string"}}, "text"))
	boom := errors.New("disk on fire")
	r := newStub(map[string]func(context.Context, Call) (string, error){
		"echo": func(_ context.Context, c Call) (string, error) { return c.Arguments["text"].(string), nil },
		"fail": func(context.Context, Call) (string, error) { return "", fmt.Errorf("write failed: %w", boom) },
		"halt": func(context.Context, Call) (string, error) { return "", Halt("user asked to stop") },
		"panic": func(context.Context, Call) (string, error) {
			panic("nil map write")
		},
		"hidden": answer("resolved although not listed"),
	}, echoTool, simpleTool("fail"), simpleTool("halt"), simpleTool("panic"))

	tests := []struct {
		name        string
		call        Call
		wantContent string
		wantError   bool
		wantErrIs   error
		wantCalls   int64
	}{
		{name: "success", call: Call{ID: "1", Name: "echo", Arguments: map[string]any{"text": "hi"}}, wantContent: "hi", wantCalls: 1},
		{name: "unknown tool lists the available ones", call: Call{ID: "2", Name: "x"},
			wantContent: `unknown tool: "x". Available tools: echo, fail, halt, panic`, wantError: true, wantErrIs: ErrUnknownTool, wantCalls: 1},
		{name: "unlisted name the resolver knows", call: Call{Name: "hidden"}, wantContent: "resolved although not listed", wantCalls: 1},
		{name: "invalid arguments: tool not called", call: Call{Name: "echo", Arguments: map[string]any{"text": 3.0}},
			wantContent: `invalid arguments for tool "echo": /text: expected string, but got number`, wantError: true, wantErrIs: ErrInvalidArguments},
		{name: "nil arguments are validated as {}", call: Call{Name: "echo"},
			wantContent: `invalid arguments for tool "echo": /: missing properties: 'text' (add them)`, wantError: true, wantErrIs: ErrInvalidArguments},
		{name: "resolver error", call: Call{Name: "fail"}, wantContent: "write failed: disk on fire", wantError: true, wantErrIs: boom, wantCalls: 1},
		{name: "halt", call: Call{Name: "halt"}, wantContent: "halt: user asked to stop", wantError: true, wantErrIs: ErrHalt, wantCalls: 1},
		{name: "panic", call: Call{Name: "panic"}, wantContent: "tool execution failed: nil map write", wantError: true, wantErrIs: ErrToolPanic, wantCalls: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := r.calls.Load()
			res := Execute(context.Background(), r, tt.call)
			assert.Equal(t, tt.wantContent, res.Content)
			assert.Equal(t, tt.wantError, res.IsError)
			assert.Equal(t, tt.call.ID, res.ToolCallID)
			assert.Equal(t, tt.call.Name, res.Name)
			if tt.wantErrIs != nil {
				assert.ErrorIs(t, res.Err, tt.wantErrIs)
			} else {
				assert.NoError(t, res.Err)
			}
			assert.Equal(t, tt.wantCalls, r.calls.Load()-before)
		})
	}
}

func TestExecutePanicIsLoggedWithStack(t *testing.T) {
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	r := newStub(map[string]func(context.Context, Call) (string, error){
		"p": func(context.Context, Call) (string, error) {
			var m map[string]int
			//lint:ignore SA5000 the nil map write is the point: a runtime panic
			m["x"] = 1
			return "", nil
		},
	}, simpleTool("p"))
	res := Execute(context.Background(), r, Call{Name: "p"})
	require.True(t, res.IsError)
	assert.Equal(t, "tool execution failed: assignment to entry in nil map", res.Content)
	var pe *PanicError
	require.ErrorAs(t, res.Err, &pe)
	assert.Contains(t, string(pe.Stack), "result_test.go")
	log := buf.String()
	assert.Contains(t, log, "tool panicked")
	assert.Contains(t, log, "tool=p")
	assert.Contains(t, log, "stack=")
}

func TestExecuteCancellation(t *testing.T) {
	r := newStub(map[string]func(context.Context, Call) (string, error){
		"slow": func(ctx context.Context, _ Call) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		},
	}, simpleTool("slow"))

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := Execute(ctx, r, Call{Name: "slow"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, context.Canceled)
	assert.Contains(t, res.Content, "cancelled")
	assert.Zero(t, r.calls.Load(), "a cancelled call never reaches the tool")

	ctx, cancel = context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res = Execute(ctx, r, Call{Name: "slow"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
	assert.Contains(t, res.Content, "deadline expired")
}

func TestExecuteNilResolver(t *testing.T) {
	res := Execute(context.Background(), nil, Call{Name: "x"})
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, ErrUnknownTool)
}

func TestShowAttachesDisplay(t *testing.T) {
	var streamed []Display
	var mu sync.Mutex
	r := newStub(map[string]func(context.Context, Call) (string, error){
		"show": func(ctx context.Context, _ Call) (string, error) {
			Show(ctx, Display{Kind: "file", Payload: map[string]any{"path": "a"}})
			Show(ctx, Display{Kind: "diff", Payload: map[string]any{"path": "b"}})
			return "ok", nil
		},
		"showfail": func(ctx context.Context, _ Call) (string, error) {
			Show(ctx, Display{Kind: "process"})
			return "", errors.New("exit 1")
		},
	}, simpleTool("show"), simpleTool("showfail"))

	ctx := WithListeners(context.Background(), Listeners{Show: func(d Display) {
		mu.Lock()
		defer mu.Unlock()
		streamed = append(streamed, d)
	}})
	res := Execute(ctx, r, Call{Name: "show"})
	require.NotNil(t, res.Display)
	assert.Equal(t, "diff", res.Display.Kind, "the last Show wins")
	assert.Equal(t, []string{"file", "diff"}, []string{streamed[0].Kind, streamed[1].Kind}, "every Show is streamed as it happens")

	res = Execute(context.Background(), r, Call{Name: "showfail"})
	assert.True(t, res.IsError)
	require.NotNil(t, res.Display, "a failed call keeps its display")
	assert.Equal(t, "process", res.Display.Kind)

	// Outside Execute, Show only notifies.
	Show(ctx, Display{Kind: "webpage"})
	assert.Len(t, streamed, 3)
	assert.NotPanics(t, func() { Show(context.Background(), Display{Kind: "x"}) })
}

func TestSessionContext(t *testing.T) {
	assert.Nil(t, ScopeFrom(context.Background()).Session)
	s := map[string]any{"user": "ada"}
	assert.Equal(t, s, ScopeFrom(WithScope(context.Background(), func(sc *Scope) { sc.Session = s })).Session)
}

func TestHalt(t *testing.T) {
	err := fmt.Errorf("tool: %w", Halt("done"))
	assert.ErrorIs(t, err, ErrHalt)
	var he *HaltError
	require.ErrorAs(t, err, &he)
	assert.Equal(t, "done", he.Reason)
}

func TestExecuteRecipe(t *testing.T) {
	var order []string
	var mu sync.Mutex
	var running, peak atomic.Int64
	step := func(name string) func(context.Context, Call) (string, error) {
		return func(_ context.Context, c Call) (string, error) {
			mu.Lock()
			order = append(order, name)
			mu.Unlock()
			return name + ":" + fmt.Sprint(c.Arguments["n"]), nil
		}
	}
	slowStep := func(_ context.Context, c Call) (string, error) {
		n := running.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(5 * time.Millisecond)
		running.Add(-1)
		return fmt.Sprint("p", c.Arguments["n"]), nil
	}
	stub := newStub(map[string]func(context.Context, Call) (string, error){
		"a": step("a"), "b": step("b"), "slow": slowStep,
		"bad": func(context.Context, Call) (string, error) { return "", errors.New("bad step") },
	}, simpleTool("a"), simpleTool("b"), simpleTool("slow"), simpleTool("bad"), simpleTool("combo"))
	r := withRecipes(stub, map[string]Recipe{
		"combo": func(args map[string]any) Plan {
			p := Plan{Serial: []Call{{Name: "a", Arguments: map[string]any{"n": 1}}, {Name: "b", Arguments: map[string]any{"n": 2}}}}
			for i := range 20 {
				p.Parallel = append(p.Parallel, Call{Name: "slow", Arguments: map[string]any{"n": i}})
			}
			return p
		},
		"composed": func(args map[string]any) Plan {
			return Plan{Serial: []Call{{Name: "a"}}, Compose: func(rs []Result) (string, error) {
				return "composed " + rs[0].Content + " for " + args["who"].(string), nil
			}}
		},
		"failing": func(map[string]any) Plan {
			return Plan{Serial: []Call{{Name: "a"}, {Name: "bad"}, {Name: "b"}}}
		},
		"parfail": func(map[string]any) Plan {
			return Plan{Parallel: []Call{{Name: "a"}, {Name: "nope"}}}
		},
		"panics": func(map[string]any) Plan { panic("recipe bug") },
	})

	res := Execute(context.Background(), r, Call{ID: "c", Name: "combo"})
	require.False(t, res.IsError, res.Content)
	parts := strings.Split(res.Content, "\n\n")
	require.Len(t, parts, 22)
	assert.Equal(t, []string{"a:1", "b:2", "p0", "p1"}, parts[:4], "results in plan order")
	assert.Equal(t, "p19", parts[21])
	assert.Equal(t, []string{"a", "b"}, order[:2], "serial steps ran in order")
	assert.LessOrEqual(t, peak.Load(), int64(runtimeGOMAXPROCS()), "parallel steps bounded by GOMAXPROCS")

	res = Execute(context.Background(), r, Call{Name: "composed", Arguments: map[string]any{"who": "ada"}})
	assert.Equal(t, "composed a:<nil> for ada", res.Content)

	order = nil
	res = Execute(context.Background(), r, Call{Name: "failing"})
	assert.True(t, res.IsError)
	assert.Equal(t, "step 2 (bad) failed: bad step", res.Content)
	assert.Equal(t, []string{"a"}, order, "a failed serial step stops the plan")

	res = Execute(context.Background(), r, Call{Name: "parfail"})
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "step 2 (nope) failed: unknown tool")
	assert.ErrorIs(t, res.Err, ErrUnknownTool)

	res = Execute(context.Background(), r, Call{Name: "panics"})
	assert.True(t, res.IsError)
	assert.Equal(t, "tool execution failed: recipe bug", res.Content)
	assert.ErrorIs(t, res.Err, ErrToolPanic)
}

// TestExecutePanicLogCarriesNoDeclaredSecret (issue 35, row 16): a tool,
// an observer (of a refused call) and a recipe that panic with a value
// quoting the call's declared secret: Execute logs the panic with the
// secret scrubbed (it logged the value as it was), for a well-formed and a
// malformed call. The result keeps the panic value for the caller (the
// model wrote the secret).
func TestExecutePanicLogCarriesNoDeclaredSecret(t *testing.T) {
	const secret = "hunter2-XYZ"
	var buf bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })

	boom := func(_ context.Context, c Call) (string, error) {
		panic(fmt.Sprintf("login with %v failed; see https://ada:%v@example.com", c.Arguments["password"], c.Arguments["password"]))
	}
	login := MustTool("login", "Logs in.", map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string"}}})
	login.SensitiveFields = []string{"password"}
	observed := MustTool("observed", "Logs in, with a long password.", map[string]any{"type": "object", "properties": map[string]any{"password": map[string]any{"type": "string", "minLength": 50}}})
	observed.SensitiveFields = []string{"password"}
	observed.Observers = []Observer{secretQuotingObserver{}}
	recipe := login
	recipe.Name = "recipe"
	recipe.Recipe = func(args map[string]any) Plan { panic("recipe saw " + fmt.Sprint(args["password"])) }
	r := newStub(map[string]func(context.Context, Call) (string, error){"login": boom}, login, observed, recipe)
	for _, call := range []Call{
		{ID: "1", Name: "login", Arguments: map[string]any{"password": secret}},
		{ID: "2", Name: "observed", Arguments: map[string]any{"password": secret}}, // refused (too short), told to the observer
		{ID: "4", Name: "recipe", Arguments: map[string]any{"password": secret}},
	} {
		buf.Reset()
		res := Execute(context.Background(), r, call)
		require.True(t, res.IsError, res.Content)
		log := buf.String()
		assert.Contains(t, log, "panicked", "call %s", call.ID)
		assert.NotContains(t, log, secret, "call %s", call.ID)
	}
	buf.Reset()
	res := Execute(context.Background(), r, MalformedCall("5", "observed", `{"password": "`+secret, errors.New("unexpected end of JSON input")))
	require.True(t, res.IsError)
	assert.Contains(t, buf.String(), "observer panicked")
	assert.NotContains(t, buf.String(), secret)
}

// secretQuotingObserver panics with the password of the call it observes.
type secretQuotingObserver struct{}

func (secretQuotingObserver) ObserveCall(_ context.Context, o Observation) {
	raw := ""
	if o.Call.Malformed != nil {
		raw = o.Call.Malformed.Raw
	}
	panic(fmt.Sprint("observer saw ", o.Call.Arguments["password"], raw))
}
