package llmtoolkit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseCall(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		want     map[string]any
		wantErrs []string
	}{
		{name: "empty means no arguments", args: "", want: map[string]any{}},
		{name: "blank means no arguments", args: "  \n", want: map[string]any{}},
		{name: "null means no arguments", args: "null", want: map[string]any{}},
		{name: "object", args: `{"path": "a.go", "offset": 3}`, want: map[string]any{"path": "a.go", "offset": 3.0}},
		{name: "nested", args: `{"edits": [{"oldText": "a", "newText": "b"}]}`,
			want: map[string]any{"edits": []any{map[string]any{"oldText": "a", "newText": "b"}}}},
		{name: "broken JSON says where", args: `{"path": "a.go",, }`, wantErrs: []string{"not valid JSON at byte 17", `near "`}},
		{name: "truncated JSON", args: `{"path": "a.go"`, wantErrs: []string{"not valid JSON", "unexpected end"}},
		{name: "array", args: `[1, 2]`, wantErrs: []string{"arguments must be a JSON object, got an array"}},
		{name: "string", args: `"hi"`, wantErrs: []string{"got a string"}},
		{name: "number", args: `42`, wantErrs: []string{"got a number"}},
		{name: "bool", args: `true`, wantErrs: []string{"got a boolean"}},
		{name: "trailing garbage", args: `{} x`, wantErrs: []string{"not valid JSON"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			call, err := ParseCall("id-1", "read_file", tt.args)
			if len(tt.wantErrs) > 0 {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalidCall)
				assert.Contains(t, err.Error(), `"read_file"`)
				for _, w := range tt.wantErrs {
					assert.Contains(t, err.Error(), w)
				}
				return
			}
			require.NoError(t, err)
			assert.Equal(t, Call{ID: "id-1", Name: "read_file", Arguments: tt.want}, call)
		})
	}
}

func FuzzParseCallValidate(f *testing.F) {
	for _, seed := range []string{"", "null", `{"path":"a","offset":1}`, `{"path":1}`, `[`, `{"a":[{"b":null}]}`, `"x"`, `{"offset":1e400}`} {
		f.Add(seed)
	}
	tool := MustTool("read_file", "Reads a file.", readFileSchema())
	f.Fuzz(func(t *testing.T, args string) {
		call, err := ParseCall("id", "read_file", args)
		if err != nil {
			assert.ErrorIs(t, err, ErrInvalidCall)
			assert.Zero(t, call)
			return
		}
		require.NotNil(t, call.Arguments, "a parsed call always has a map")
		verr := tool.ValidateArguments(call.Arguments)
		if verr != nil {
			assert.ErrorIs(t, verr, ErrInvalidArguments)
			return
		}
		// Valid arguments have a string path, as the schema says.
		_, ok := call.Arguments["path"].(string)
		assert.True(t, ok, "validated arguments must satisfy the schema: %v", call.Arguments)
		_, err = json.Marshal(call)
		assert.NoError(t, err)
	})
}

func TestParseCallLenient(t *testing.T) {
	call := ParseCallLenient("c1", "read_file", `{"path": "a.go"}`)
	assert.Equal(t, Call{ID: "c1", Name: "read_file", Arguments: map[string]any{"path": "a.go"}}, call)

	call = ParseCallLenient("c2", "read_file", `{"path": "a.go",, }`)
	assert.Equal(t, map[string]any{}, call.Arguments)
	require.NotNil(t, call.Malformed)
	assert.Equal(t, `{"path": "a.go",, }`, call.Malformed.Raw)
	assert.Contains(t, call.Malformed.Reason, "not valid JSON at byte 17")

	data, err := json.Marshal(call)
	require.NoError(t, err)
	var back Call
	require.NoError(t, json.Unmarshal(data, &back))
	assert.Equal(t, call, back, "a malformed call survives storage")
}

// TestExecuteRefusesMalformedCalls: the tool does not run, the result
// quotes the arguments and the parse error, and the tool's observers are
// told, as for any refused call.
func TestExecuteRefusesMalformedCalls(t *testing.T) {
	ob := &recordingObserver{}
	s := observed(ob)
	ran := false
	s.fns["count"] = func(context.Context, Call) (string, error) { ran = true; return "", nil }

	res := Execute(t.Context(), s, ParseCallLenient("c1", "count", `{"n": 1`))
	assert.False(t, ran)
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, ErrInvalidCall)
	assert.Equal(t, "c1", res.ToolCallID)
	assert.Contains(t, res.Content, `"count" was not run`)
	assert.Contains(t, res.Content, `{\"n\": 1`)
	assert.Contains(t, res.Content, "unexpected end of JSON input")
	assert.NotContains(t, res.Content, `invalid tool call "count": `, "the reason is not repeated")
	obs := ob.all()
	require.Len(t, obs, 1)
	assert.Equal(t, ObservedRefused, obs[0].Kind)
	assert.Equal(t, res.Content, obs[0].Result.Content)

	// Long garbage is quoted in part, cut on a character boundary.
	long := "{" + strings.Repeat("é", 3000)
	res = Execute(t.Context(), s, ParseCallLenient("c2", "count", long))
	assert.Less(t, len(res.Content), 3000)
	assert.Contains(t, res.Content, "bytes in all")
	assert.True(t, utf8.ValidString(res.Content))
}

// TestShownDisplay: a wrapper below Execute reads the Display the call
// showed so far, the last one; outside Execute there is none.
func TestShownDisplay(t *testing.T) {
	_, ok := ShownDisplay(t.Context())
	assert.False(t, ok, "outside Execute")
	tool := MustTool("show", "Shows.", map[string]any{"type": "object"})
	var after Display
	var hadBefore, hadAfter bool
	fake := Indexed(ResolverFunc(func(ctx context.Context, _ Call) (string, error) {
		_, hadBefore = ShownDisplay(ctx)
		Show(ctx, Display{Kind: "one"})
		Show(ctx, Display{Kind: "two", Payload: 2})
		after, hadAfter = ShownDisplay(ctx)
		return "ok", nil
	}), []Tool{tool})
	res := Execute(t.Context(), fake, Call{Name: "show"})
	require.False(t, res.IsError, res.Content)
	assert.False(t, hadBefore, "nothing shown yet")
	require.True(t, hadAfter)
	assert.Equal(t, Display{Kind: "two", Payload: 2}, after)
}
