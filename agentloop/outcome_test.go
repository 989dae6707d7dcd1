package agentloop_test

import (
	"bytes"
	"context"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// sentinels are every sentinel an outcome keeps.
var sentinels = []error{
	llmtoolkit.ErrHalt, llmtoolkit.ErrDenied, llmtoolkit.ErrUnknownTool, llmtoolkit.ErrInvalidArguments,
	llmtoolkit.ErrInvalidCall, llmtoolkit.ErrInvalidTool, llmtoolkit.ErrToolPanic, llmtoolkit.ErrSchemaTooComplex,
	agentloop.ErrTooManyCalls, agentloop.ErrMaxIterations, agentloop.ErrCircuitBreaker, agentloop.ErrHalted,
	agentloop.ErrInvalidOptions, agentloop.ErrModelPanic, agentloop.ErrCallbackPanic, agentloop.ErrExecutor,
	context.Canceled, context.DeadlineExceeded,
}

// viaJSON encodes v as JSON and decodes it into a new T.
func viaJSON[T any](t testing.TB, v T) T {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	var out T
	require.NoError(t, json.Unmarshal(b, &out), "%s", b)
	return out
}

// viaGob encodes v with gob and decodes it into a new T.
func viaGob[T any](t testing.TB, v T) T {
	var buf bytes.Buffer
	require.NoError(t, gob.NewEncoder(&buf).Encode(v))
	var out T
	require.NoError(t, gob.NewDecoder(&buf).Decode(&out))
	return out
}

// roundTrip encodes res, sends it through JSON or gob, and restores it.
func roundTrip(t testing.TB, res llmtoolkit.Result, codec string) llmtoolkit.Result {
	o := agentloop.EncodeResult(res)
	if codec == "gob" {
		return viaGob(t, o).Result()
	}
	return viaJSON(t, o).Result()
}

func TestToolOutcomeRoundTrip(t *testing.T) {
	type check func(t *testing.T, got llmtoolkit.Result)
	tests := []struct {
		name  string
		res   llmtoolkit.Result
		check check
	}{
		{"plain", llmtoolkit.Result{ToolCallID: "c1", Name: "t", Content: "ok"}, func(t *testing.T, got llmtoolkit.Result) {
			assert.NoError(t, got.Err)
			assert.Nil(t, got.Display)
		}},
		{"halt", llmtoolkit.Result{Name: "stop", Content: "halt: done", IsError: true, Err: fmt.Errorf("wrapped: %w", llmtoolkit.Halt("done"))}, func(t *testing.T, got llmtoolkit.Result) {
			var he *llmtoolkit.HaltError
			require.ErrorAs(t, got.Err, &he)
			assert.Equal(t, "done", he.Reason)
			assert.ErrorIs(t, got.Err, llmtoolkit.ErrHalt)
		}},
		{"halt with no reason", llmtoolkit.Result{Name: "stop", IsError: true, Err: llmtoolkit.Halt("")}, func(t *testing.T, got llmtoolkit.Result) {
			var he *llmtoolkit.HaltError
			require.ErrorAs(t, got.Err, &he)
			assert.Empty(t, he.Reason)
		}},
		{"denied", llmtoolkit.Result{Name: "rm", Content: "no", IsError: true, Err: llmtoolkit.Deny("rm", "not in plan mode")}, func(t *testing.T, got llmtoolkit.Result) {
			var de *llmtoolkit.DeniedError
			require.ErrorAs(t, got.Err, &de)
			assert.Equal(t, llmtoolkit.DeniedError{Tool: "rm", Reason: "not in plan mode"}, *de)
			assert.ErrorIs(t, got.Err, llmtoolkit.ErrDenied)
		}},
		{"tool panic", llmtoolkit.Result{Name: "p", IsError: true, Err: &llmtoolkit.PanicError{Value: 42, Stack: []byte("stack")}}, func(t *testing.T, got llmtoolkit.Result) {
			var pe *llmtoolkit.PanicError
			require.ErrorAs(t, got.Err, &pe)
			assert.Equal(t, "42", pe.Value)
			assert.Equal(t, "tool execution failed: 42", got.Err.Error())
		}},
		{"model panic", llmtoolkit.Result{Name: "p", IsError: true, Err: &agentloop.ModelPanicError{Value: "boom"}}, func(t *testing.T, got llmtoolkit.Result) {
			var pe *agentloop.ModelPanicError
			require.ErrorAs(t, got.Err, &pe)
			assert.Equal(t, "boom", pe.Value)
		}},
		{"several sentinels", llmtoolkit.Result{Name: "x", IsError: true, Err: errors.Join(llmtoolkit.ErrInvalidArguments, fmt.Errorf("late: %w", context.DeadlineExceeded))}, func(t *testing.T, got llmtoolkit.Result) {
			assert.ErrorIs(t, got.Err, llmtoolkit.ErrInvalidArguments)
			assert.ErrorIs(t, got.Err, context.DeadlineExceeded)
			assert.NotErrorIs(t, got.Err, context.Canceled)
		}},
		{"unknown error", llmtoolkit.Result{Name: "x", IsError: true, Err: errors.New("disk full")}, func(t *testing.T, got llmtoolkit.Result) {
			var re *agentloop.RecordedError
			require.ErrorAs(t, got.Err, &re)
			for _, s := range sentinels {
				assert.NotErrorIs(t, got.Err, s)
			}
		}},
		{"display", llmtoolkit.Result{Name: "read", Content: "text", Display: &llmtoolkit.Display{Kind: "file", Payload: struct {
			Path  string `json:"path"`
			Lines int    `json:"lines"`
		}{"a.go", 3}}}, func(t *testing.T, got llmtoolkit.Result) {
			require.NotNil(t, got.Display)
			assert.Equal(t, llmtoolkit.Display{Kind: "file", Payload: map[string]any{"path": "a.go", "lines": 3.0}}, *got.Display)
		}},
		{"display without payload", llmtoolkit.Result{Name: "x", Display: &llmtoolkit.Display{Kind: "todos"}}, func(t *testing.T, got llmtoolkit.Result) {
			assert.Equal(t, &llmtoolkit.Display{Kind: "todos"}, got.Display)
		}},
		{"display that is not JSON", llmtoolkit.Result{Name: "x", Content: "c", Display: &llmtoolkit.Display{Kind: "chan", Payload: make(chan int)}}, func(t *testing.T, got llmtoolkit.Result) {
			assert.Equal(t, &llmtoolkit.Display{Kind: "chan"}, got.Display, "the kind is kept")
		}},
		{"content not UTF-8", llmtoolkit.Result{Name: "cat", Content: "\xff\xfebinary\x00"}, nil},
		{"message not UTF-8", llmtoolkit.Result{Name: "cat", IsError: true, Err: errors.New("bad byte \xff")}, nil},
	}
	for _, s := range sentinels {
		tests = append(tests, struct {
			name  string
			res   llmtoolkit.Result
			check check
		}{"sentinel " + s.Error(), llmtoolkit.Result{ToolCallID: "c", Name: "t", Content: "failed", IsError: true, Err: fmt.Errorf("call failed: %w", s)}, func(t *testing.T, got llmtoolkit.Result) {
			assert.ErrorIs(t, got.Err, s)
		}})
	}
	for _, codec := range []string{"json", "gob"} {
		for _, tc := range tests {
			t.Run(codec+"/"+tc.name, func(t *testing.T) {
				got := roundTrip(t, tc.res, codec)
				assert.Equal(t, tc.res.ToolCallID, got.ToolCallID)
				assert.Equal(t, tc.res.Name, got.Name)
				assert.Equal(t, tc.res.Content, got.Content)
				assert.Equal(t, tc.res.IsError, got.IsError)
				if tc.res.Err == nil {
					assert.NoError(t, got.Err)
				} else {
					require.Error(t, got.Err)
					assert.Equal(t, tc.res.Err.Error(), got.Err.Error())
				}
				if tc.check != nil {
					tc.check(t, got)
				}
				once := agentloop.EncodeResult(got)
				assert.Equal(t, once, agentloop.EncodeResult(roundTrip(t, got, codec)), "a restored result round-trips unchanged")
			})
		}
	}
}

func TestModelOutcomeRoundTrip(t *testing.T) {
	resp := agentloop.Response{
		Content:    "thinking",
		ToolCalls:  []llmtoolkit.Call{{ID: "c1", Name: "read", Arguments: map[string]any{"path": "a", "n": 2.0, "deep": map[string]any{"x": []any{true}}}}, llmtoolkit.MalformedCall("c2", "edit", "{oops", errors.New("bad json"))},
		Usage:      agentloop.Usage{InputTokens: 10, OutputTokens: 3},
		StopReason: "tool_use",
		Provider:   llmtoolkit.ProviderState{"anthropic": json.RawMessage(`{"thinking":"x"}`)},
	}
	tests := []struct {
		name  string
		resp  agentloop.Response
		err   error
		check func(t *testing.T, err error)
	}{
		{"response", resp, nil, nil},
		{"empty response", agentloop.Response{}, nil, nil},
		{"provider error", agentloop.Response{}, errors.New("503 overloaded"), nil},
		{"deadline", agentloop.Response{}, fmt.Errorf("request: %w", context.DeadlineExceeded), func(t *testing.T, err error) {
			assert.ErrorIs(t, err, context.DeadlineExceeded)
		}},
		{"SendFunc panic", agentloop.Response{}, &agentloop.ModelPanicError{Value: "nil map"}, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, agentloop.ErrModelPanic)
			var pe *agentloop.ModelPanicError
			require.ErrorAs(t, err, &pe)
			assert.Equal(t, "nil map", pe.Value)
		}},
	}
	for _, codec := range []string{"json", "gob"} {
		for _, tc := range tests {
			t.Run(codec+"/"+tc.name, func(t *testing.T) {
				o := agentloop.EncodeModel(tc.resp, tc.err)
				if codec == "gob" {
					o = viaGob(t, o)
				} else {
					o = viaJSON(t, o)
				}
				got, err := o.Unpack()
				if tc.err != nil {
					require.Error(t, err)
					assert.Equal(t, tc.err.Error(), err.Error())
					assert.Equal(t, agentloop.Response{}, got)
				} else {
					require.NoError(t, err)
					assert.Equal(t, tc.resp, got)
				}
				if tc.check != nil {
					tc.check(t, err)
				}
			})
		}
	}
}

func TestModelOutcomeFailures(t *testing.T) {
	o := agentloop.EncodeModel(agentloop.Response{ToolCalls: []llmtoolkit.Call{{Name: "t", Arguments: map[string]any{"f": func() {}}}}}, nil)
	_, err := viaJSON(t, o).Unpack()
	require.ErrorIs(t, err, agentloop.ErrExecutor, "a response that cannot be recorded is the engine's failure")
	assert.Contains(t, err.Error(), "could not be encoded")

	_, err = agentloop.ModelOutcome{}.Unpack()
	require.ErrorIs(t, err, agentloop.ErrExecutor)
	_, err = agentloop.ModelOutcome{Response: json.RawMessage(`[1]`)}.Unpack()
	require.ErrorIs(t, err, agentloop.ErrExecutor)

	assert.Nil(t, agentloop.EncodeError(nil))
	var none *agentloop.ErrorOutcome
	assert.NoError(t, none.Unpack())
	unknown := &agentloop.ErrorOutcome{Message: "from a later version", Kinds: []string{"llmtoolkit.ErrSomethingNew", "context.Canceled"}}
	err = unknown.Unpack()
	assert.Equal(t, "from a later version", err.Error())
	assert.ErrorIs(t, err, context.Canceled)
}

// FuzzToolOutcome: any result survives JSON with its content and error
// message exact, the sentinel it wraps, and its halt reason; and any
// bytes decode without a panic into an outcome that encodes again the
// same way.
func FuzzToolOutcome(f *testing.F) {
	f.Add("ok", "boom", uint8(0), "reason", `{"a":1}`, []byte(`{"name":"t","content":"x","error":{"message":"m","kinds":["llmtoolkit.HaltError"]}}`))
	f.Add("\xff", "\xfe", uint8(3), "\xff", `not json`, []byte(`{"display":{"kind":"k","payload":{"x":[1,2]}},"content_bytes":"/w=="}`))
	f.Add("", "", uint8(255), "", `null`, []byte(`null`))
	f.Add("0", "0", uint8(40), "0", "0", []byte("0")) // a plain error: no halt to find
	f.Fuzz(func(t *testing.T, content, msg string, kind uint8, reason, payload string, raw []byte) {
		var err error
		switch s := int(kind) % (len(sentinels) + 3); {
		case s < len(sentinels):
			err = fmt.Errorf("%s: %w", msg, sentinels[s])
		case s == len(sentinels):
			err = fmt.Errorf("%s: %w", msg, llmtoolkit.Halt(reason))
		case s == len(sentinels)+1:
			err = errors.New(msg)
		}
		res := llmtoolkit.Result{ToolCallID: "id", Name: "tool", Content: content, IsError: err != nil, Err: err}
		var p any
		if json.Unmarshal([]byte(payload), &p) == nil {
			res.Display = &llmtoolkit.Display{Kind: "k", Payload: p}
		}
		got := roundTrip(t, res, "json")
		require.Equal(t, content, got.Content)
		if err == nil {
			require.NoError(t, got.Err)
		} else {
			require.Equal(t, err.Error(), got.Err.Error())
			switch s := int(kind) % (len(sentinels) + 3); {
			case s < len(sentinels):
				require.ErrorIs(t, got.Err, sentinels[s])
			case s == len(sentinels):
				var he *llmtoolkit.HaltError
				require.ErrorAs(t, got.Err, &he)
				require.Equal(t, agentloop.EncodeError(err).HaltReason, he.Reason)
			}
		}
		if res.Display != nil {
			require.Equal(t, res.Display.Payload, got.Display.Payload)
		}

		var o agentloop.ToolOutcome
		if json.Unmarshal(raw, &o) != nil {
			return
		}
		first := agentloop.EncodeResult(o.Result())
		second := agentloop.EncodeResult(viaJSON(t, first).Result())
		require.Equal(t, first, second)
		var m agentloop.ModelOutcome
		if json.Unmarshal(raw, &m) == nil {
			_, _ = m.Unpack()
		}
	})
}
