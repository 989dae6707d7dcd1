package llmtoolkit

import (
	"encoding/json"
	"testing"

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
