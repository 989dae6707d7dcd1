package otelkit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	lttrace "github.com/llmtoolkit/llmtoolkit/trace"
)

var textSchema = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"text": map[string]any{"type": "string"}},
	"required":             []any{"text"},
	"additionalProperties": false,
}

// echoFake has one tool, echo, that answers its text argument.
func echoFake() *lt.Fake {
	return (&lt.Fake{}).Add(llmtoolkit.MustTool("echo", "Echoes the text.", textSchema),
		func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Arguments["text"].(string), nil })
}

func TestToolSpan(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(echoFake(), tel.opts()...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{ID: "call_1", Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.False(t, res.IsError, res.Content)

	s := tel.span(t, "execute_tool echo")
	assert.Equal(t, trace.SpanKindInternal, s.SpanKind)
	assert.Equal(t, map[string]any{
		"gen_ai.operation.name":   "execute_tool",
		"gen_ai.tool.name":        "echo",
		"gen_ai.tool.call.id":     "call_1",
		"gen_ai.tool.description": "Echoes the text.",
		"gen_ai.tool.type":        "function",
	}, attrs(s), "no arguments or result without WithCaptureContent")
	assert.Equal(t, codes.Unset, s.Status.Code)
	assert.False(t, s.Parent.IsValid(), "a call without a span in its context starts a trace")
	assert.Equal(t, "github.com/llmtoolkit/llmtoolkit/otelkit", s.InstrumentationScope.Name)
	assert.Equal(t, "https://opentelemetry.io/schemas/"+otelkit.SemConvVersion, s.InstrumentationScope.SchemaURL)

	pts := tel.toolPoints(t)
	require.Len(t, pts, 1)
	assert.Equal(t, map[string]any{"gen_ai.tool.name": "echo", "gen_ai.tool.type": "function"}, pts[0].attrs)
	assert.Equal(t, uint64(1), pts[0].count)
	spanSeconds := s.EndTime.Sub(s.StartTime).Seconds()
	assert.InDelta(t, spanSeconds, pts[0].sum, 1e-9, "the metric is the span's duration")
}

// rateLimited declares its class with OpenTelemetry's ErrorType convention.
type rateLimited struct{}

func (rateLimited) Error() string     { return "too many requests" }
func (rateLimited) ErrorType() string { return "rate_limited" }

var errOutsideRoot = errors.New("outside the working directory")

func TestToolErrorClasses(t *testing.T) {
	block := func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		<-ctx.Done()
		return "", ctx.Err()
	}
	cases := []struct {
		name    string
		handler lt.HandlerFunc
		args    map[string]any
		call    string // tool name called; default "t"
		raw     string // arguments as the model sent them, not JSON: a malformed call
		ctx     func(t *testing.T) context.Context
		opts    []otelkit.Option
		class   string
	}{
		{name: "validation", args: map[string]any{"text": 3.0}, class: otelkit.ClassValidation},
		{name: "malformed arguments", raw: `{"text": "x"`, class: otelkit.ClassValidation},
		{name: "unknown tool", call: "nope", class: otelkit.ClassUnknownTool},
		{name: "timeout", handler: block, class: otelkit.ClassTimeout, ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithTimeout(testContext(t), 20*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}},
		{name: "canceled before the call", class: otelkit.ClassCanceled, ctx: func(t *testing.T) context.Context {
			ctx, cancel := context.WithCancel(testContext(t))
			cancel()
			return ctx
		}},
		{name: "panic", handler: func(context.Context, llmtoolkit.Call) (string, error) { panic("kaboom") }, class: otelkit.ClassPanic},
		{name: "halt", handler: func(context.Context, llmtoolkit.Call) (string, error) { return "", llmtoolkit.Halt("done") }, class: otelkit.ClassHalt},
		{name: "denied by a permission check", class: otelkit.ClassDenied, handler: func(context.Context, llmtoolkit.Call) (string, error) {
			return "", llmtoolkit.Deny("echo", "not in this mode")
		}},
		{name: "permission", class: otelkit.ClassDenied, handler: func(context.Context, llmtoolkit.Call) (string, error) {
			return "", &fs.PathError{Op: "open", Path: "/etc/shadow", Err: fs.ErrPermission}
		}},
		{name: "host class", class: otelkit.ClassDenied, opts: []otelkit.Option{otelkit.WithErrorClass(otelkit.ClassDenied, errOutsideRoot)},
			handler: func(context.Context, llmtoolkit.Call) (string, error) {
				return "", fmt.Errorf("%w: ../x", errOutsideRoot)
			}},
		{name: "ErrorType method", class: "rate_limited", handler: func(context.Context, llmtoolkit.Call) (string, error) {
			return "", fmt.Errorf("calling the API: %w", rateLimited{})
		}},
		{name: "tool error", class: otelkit.ClassToolError, handler: func(context.Context, llmtoolkit.Call) (string, error) {
			return "", errors.New("disk full")
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t)
			handler := tc.handler
			if handler == nil {
				handler = func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil }
			}
			fake := (&lt.Fake{}).Add(llmtoolkit.MustTool("t", "A tool.", textSchema), handler)
			r := otelkit.Instrument(fake, tel.opts(tc.opts...)...)
			ctx := testContext(t)
			if tc.ctx != nil {
				ctx = tc.ctx(t)
			}
			name, args := "t", tc.args
			if tc.call != "" {
				name = tc.call
			}
			if args == nil {
				args = map[string]any{"text": "x"}
			}
			call := llmtoolkit.Call{ID: "c1", Name: name, Arguments: args}
			if tc.raw != "" {
				call = llmtoolkit.ParseCallLenient("c1", name, tc.raw)
			}
			res := llmtoolkit.Execute(ctx, r, call)
			require.True(t, res.IsError, "the call must fail")

			s := tel.span(t, "execute_tool "+name)
			assert.Equal(t, codes.Error, s.Status.Code)
			assert.NotEmpty(t, s.Status.Description)
			assert.Equal(t, tc.class, attrs(s)["error.type"])
			pts := tel.toolPoints(t)
			require.Len(t, pts, 1)
			assert.Equal(t, tc.class, pts[0].attrs["error.type"])
		})
	}
}

// loginTool has sensitive fields of both kinds; it answers with the token,
// the PIN and the URL it was given, or fails quoting them.
func loginFake(fail bool) *lt.Fake {
	tool := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	tool.SensitiveFields = []string{"token", "auth.pin"}
	return (&lt.Fake{}).Add(tool, func(_ context.Context, c llmtoolkit.Call) (string, error) {
		auth := c.Arguments["auth"].(map[string]any)
		out := fmt.Sprintf("logged in with %v, pin %v, password %v, at %v", c.Arguments["token"], auth["pin"], c.Arguments["password"], c.Arguments["url"])
		if fail {
			return "", errors.New("refused: " + out)
		}
		return out, nil
	})
}

var loginArgs = map[string]any{
	"token":    "sk-live-123456",
	"password": "hunter22",
	"url":      "https://ada:s3cr3tpw@example.com/login",
	"auth":     map[string]any{"pin": 4321.0, "user": "ada"},
	"note":     "my token is sk-live-123456",
}

// TestContentRedactedAsTrace runs the same calls through trace.Record and
// through Instrument with WithCaptureContent, and checks that the span carries
// exactly what the trace row stores.
func TestContentRedactedAsTrace(t *testing.T) {
	for _, fail := range []bool{false, true} {
		t.Run(map[bool]string{false: "success", true: "failure"}[fail], func(t *testing.T) {
			tel := newTelemetry(t)
			call := llmtoolkit.Call{ID: "c1", Name: "login", Arguments: loginArgs}

			r := otelkit.Instrument(loginFake(fail), tel.opts(otelkit.WithCaptureContent(), otelkit.WithRedactFields("password"))...)
			res := llmtoolkit.Execute(testContext(t), r, call)
			require.Equal(t, fail, res.IsError, res.Content)

			db, err := lttrace.OpenSQLite(":memory:")
			require.NoError(t, err)
			require.NoError(t, lttrace.Migrate(db))
			rec := lttrace.Record(loginFake(fail), db, lttrace.WithRedactFields("password"),
				lttrace.WithDefaultConversation(uuid.NewString(), uuid.NewString()))
			t.Cleanup(func() { _ = rec.Close() })
			llmtoolkit.Execute(testContext(t), rec, call)
			rows, err := lttrace.List(testContext(t), db, lttrace.Filter{})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			row := rows[0]

			s := tel.span(t, "execute_tool login")
			a := attrs(s)
			var spanArgs map[string]any
			require.NoError(t, json.Unmarshal([]byte(a["gen_ai.tool.call.arguments"].(string)), &spanArgs))
			assert.Equal(t, map[string]any(row.Arguments), spanArgs, "the arguments are redacted as the trace row's")
			assert.Equal(t, otelkit.Redacted, spanArgs["token"])
			if fail {
				assert.NotContains(t, a, "gen_ai.tool.call.result", "no result for a failed call")
				assert.Equal(t, row.Result["error"], s.Status.Description, "the error text is scrubbed as the trace row's")
			} else {
				assert.Equal(t, row.Result["content"], a["gen_ai.tool.call.result"], "the result is scrubbed as the trace row's")
			}
			for _, secret := range []string{"sk-live-123456", "hunter22", "4321", "s3cr3tpw"} {
				for k, v := range a {
					assert.NotContains(t, fmt.Sprint(v), secret, "attribute %s leaks a secret", k)
				}
				assert.NotContains(t, s.Status.Description, secret)
			}
		})
	}
}

func TestContentNotCapturedByDefault(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(loginFake(true), tel.opts()...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "login", Arguments: loginArgs})
	require.True(t, res.IsError)
	s := tel.span(t, "execute_tool login")
	a := attrs(s)
	assert.NotContains(t, a, "gen_ai.tool.call.arguments")
	assert.NotContains(t, a, "gen_ai.tool.call.result")
	assert.Contains(t, s.Status.Description, "refused: logged in with [REDACTED]", "the error text is still scrubbed")
	assert.NotContains(t, s.Status.Description, "sk-live-123456")
}

func TestContentCapped(t *testing.T) {
	tel := newTelemetry(t)
	long := strings.Repeat("é", 100) // 200 bytes
	fake := (&lt.Fake{}).Returns("big", long)
	r := otelkit.Instrument(fake, tel.opts(otelkit.WithCaptureContent(), otelkit.WithMaxContentBytes(51))...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "big", Arguments: map[string]any{"x": long}})
	require.False(t, res.IsError, res.Content)
	a := attrs(tel.span(t, "execute_tool big"))
	result := a["gen_ai.tool.call.result"].(string)
	assert.Equal(t, strings.Repeat("é", 25)+"…[150 bytes cut]", result, "cut on a rune boundary and marked")
	args := a["gen_ai.tool.call.arguments"].(string)
	assert.True(t, strings.HasSuffix(args, " bytes cut]"), args)
	assert.LessOrEqual(t, len(args), 51+len("…[1000 bytes cut]"))
}

// A text that is not UTF-8 keeps its first MaxContentBytes bytes, as
// every cap of the project does (internal/textutil.CutUTF8).
func TestContentCapKeepsBytesThatAreNotUTF8(t *testing.T) {
	tel := newTelemetry(t)
	fake := (&lt.Fake{}).Returns("bin", strings.Repeat("\x80", 100))
	r := otelkit.Instrument(fake, tel.opts(otelkit.WithCaptureContent(), otelkit.WithMaxContentBytes(50))...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "bin", Arguments: map[string]any{}})
	require.False(t, res.IsError, res.Content)
	a := attrs(tel.span(t, "execute_tool bin"))
	assert.Equal(t, strings.Repeat("\x80", 50)+"…[50 bytes cut]", a["gen_ai.tool.call.result"])
}

// TestRefusedCallsThroughWrappers checks that a call Execute refuses gets
// its span whatever wraps the instrumented resolver.
func TestRefusedCallsThroughWrappers(t *testing.T) {
	wrappers := map[string]func(llmtoolkit.Resolver) llmtoolkit.Resolver{
		"direct": func(r llmtoolkit.Resolver) llmtoolkit.Resolver { return r },
		"compose": func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			return llmtoolkit.Compose(lt.NewFake(map[string]string{"other": "x"}), r)
		},
		"filter": func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			return llmtoolkit.Filter(r, func(llmtoolkit.Tool) bool { return true })
		},
		"session": func(r llmtoolkit.Resolver) llmtoolkit.Resolver {
			_, s := llmtoolkit.PrepareSession(r, []string{"echo"}, nil)
			return s
		},
	}
	for name, wrap := range wrappers {
		t.Run(name, func(t *testing.T) {
			tel := newTelemetry(t)
			r := wrap(otelkit.Instrument(echoFake(), tel.opts()...))
			res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": 1.0}})
			require.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
			s := tel.span(t, "execute_tool echo")
			assert.Equal(t, otelkit.ClassValidation, attrs(s)["error.type"])
			assert.Equal(t, res.Content, s.Status.Description)
			assert.Len(t, tel.spans(), 1)
		})
	}
}

// TestRecipeStepsNest checks that a recipe call's span is the parent of its
// steps' spans, parallel ones included, and ends after them.
func TestRecipeStepsNest(t *testing.T) {
	tel := newTelemetry(t)
	fake := lt.NewFake(map[string]string{"a": "A", "b": "B", "c": "C"})
	recipe := llmtoolkit.MustTool("abc", "Runs a, then b and c.", map[string]any{"type": "object"})
	recipe.Recipe = func(map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{
			Serial:   []llmtoolkit.Call{{Name: "a"}},
			Parallel: []llmtoolkit.Call{{Name: "b"}, {Name: "c"}},
		}
	}
	fake.Add(recipe, nil)
	r := otelkit.Instrument(fake, tel.opts()...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{ID: "r1", Name: "abc"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "A\n\nB\n\nC", res.Content)

	parent := tel.span(t, "execute_tool abc")
	assert.Equal(t, "r1", attrs(parent)["gen_ai.tool.call.id"])
	for _, step := range []string{"a", "b", "c"} {
		s := tel.span(t, "execute_tool "+step)
		assert.Equal(t, parent.SpanContext.SpanID(), s.Parent.SpanID(), "step %s nests under the recipe", step)
		assert.Equal(t, parent.SpanContext.TraceID(), s.SpanContext.TraceID())
		assert.False(t, s.EndTime.After(parent.EndTime), "the recipe span ends after its step %s", step)
	}
	assert.Len(t, tel.toolPoints(t), 4, "one data point per tool: the recipe and its three steps")
}

func TestNilResolver(t *testing.T) {
	tel := newTelemetry(t)
	r := otelkit.Instrument(nil, tel.opts()...)
	assert.Empty(t, r.Tools())
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{Name: "x"})
	require.ErrorIs(t, res.Err, llmtoolkit.ErrUnknownTool)
	assert.Contains(t, res.Content, "nil resolver")
}

// TestContentRedactedForUndeclaredSteps: instrumenting a Session from
// outside, the span of a recipe step the Session does not list is redacted
// by the step's own sensitive fields (the Session tells its definition).
func TestContentRedactedForUndeclaredSteps(t *testing.T) {
	tel := newTelemetry(t)
	both := llmtoolkit.MustTool("login_twice", "Logs in.", map[string]any{"type": "object"})
	both.Recipe = func(map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "login", Arguments: loginArgs}}}
	}
	fake := loginFake(false).Add(both, nil)
	_, session := llmtoolkit.PrepareSession(fake, []string{"login_twice"}, nil)
	r := otelkit.Instrument(session, tel.opts(otelkit.WithCaptureContent())...)
	res := llmtoolkit.Execute(testContext(t), r, llmtoolkit.Call{ID: "c1", Name: "login_twice"})
	require.False(t, res.IsError, res.Content)
	a := attrs(tel.span(t, "execute_tool login"))
	assert.NotContains(t, fmt.Sprint(a), "sk-live-123456")
	assert.NotContains(t, fmt.Sprint(a), "4321")
}
