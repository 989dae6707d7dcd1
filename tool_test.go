package llmtoolkit

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func objectSchema(props map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": props}
	if len(required) > 0 {
		req := make([]any, len(required))
		for i, r := range required {
			req[i] = r
		}
		s["required"] = req
	}
	return s
}

func readFileSchema() map[string]any {
	return objectSchema(map[string]any{
		"path":   map[string]any{"type": "string"},
		"offset": map[string]any{"type": "integer", "minimum": 1},
		"limit":  map[string]any{"type": "integer"},
	}, "path")
}

func TestNewTool(t *testing.T) {
	long := strings.Repeat("a", 65)
	tests := []struct {
		name, tool, desc string
		params           map[string]any
		wantErr          string
	}{
		{name: "valid", tool: "read_file", desc: "Reads a file.", params: readFileSchema()},
		{name: "dash and digits", tool: "a-1_B", desc: "d", params: objectSchema(nil)},
		{name: "64 chars", tool: long[:64], desc: "d", params: objectSchema(nil)},
		{name: "65 chars", tool: long, desc: "d", params: objectSchema(nil), wantErr: "name must match"},
		{name: "empty name", tool: "", desc: "d", params: objectSchema(nil), wantErr: "name must match"},
		{name: "space in name", tool: "read file", desc: "d", params: objectSchema(nil), wantErr: "name must match"},
		{name: "dot in name", tool: "fs.read", desc: "d", params: objectSchema(nil), wantErr: "name must match"},
		{name: "empty description", tool: "x", desc: "  ", params: objectSchema(nil), wantErr: "description is empty"},
		{name: "nil parameters become empty object", tool: "x", desc: "d", params: nil},
		{name: "not an object", tool: "x", desc: "d", params: map[string]any{"type": "string"}, wantErr: `"type": "object"`},
		{name: "bad schema", tool: "x", desc: "d", params: objectSchema(map[string]any{"a": map[string]any{"type": "nonsense"}}), wantErr: "not valid JSON Schema"},
		{name: "external ref refused", tool: "x", desc: "d", params: objectSchema(map[string]any{"a": map[string]any{"$ref": "file:///etc/passwd"}}), wantErr: "not valid JSON Schema"},
		{name: "local ref allowed", tool: "x", desc: "d", params: map[string]any{
			"type": "object", "$defs": map[string]any{"n": map[string]any{"type": "integer"}},
			"properties": map[string]any{"a": map[string]any{"$ref": "#/$defs/n"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := NewTool(tt.tool, tt.desc, tt.params)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalidTool)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.tool, tool.Name)
			assert.Equal(t, "object", tool.Parameters["type"])
			assert.Contains(t, tool.Parameters, "properties")
		})
	}
}

func TestNewToolAddsPropertiesWithoutMutatingCaller(t *testing.T) {
	params := map[string]any{"type": "object"}
	tool, err := NewTool("x", "d", params)
	require.NoError(t, err)
	assert.Equal(t, map[string]any{}, tool.Parameters["properties"])
	assert.NotContains(t, params, "properties", "the caller's map must not change")
}

func TestToolFromMap(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{"q": map[string]any{"type": "string"}}}
	tests := []struct {
		name    string
		in      map[string]any
		wantErr string
		check   func(t *testing.T, tool Tool)
	}{
		{name: "parameters", in: map[string]any{"name": "a", "description": "d", "parameters": schema},
			check: func(t *testing.T, tool Tool) { assert.Contains(t, tool.Parameters["properties"], "q") }},
		{name: "anthropic input_schema", in: map[string]any{"name": "a", "description": "d", "input_schema": schema},
			check: func(t *testing.T, tool Tool) { assert.Contains(t, tool.Parameters["properties"], "q") }},
		{name: "mcp inputSchema", in: map[string]any{"name": "a", "description": "d", "inputSchema": schema},
			check: func(t *testing.T, tool Tool) { assert.Contains(t, tool.Parameters["properties"], "q") }},
		{name: "no schema", in: map[string]any{"name": "a", "description": "d"},
			check: func(t *testing.T, tool Tool) { assert.Equal(t, "object", tool.Parameters["type"]) }},
		{name: "annotations", in: map[string]any{"name": "a", "description": "d", "annotations": map[string]any{
			"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true, "title": "ignored"}},
			check: func(t *testing.T, tool Tool) {
				assert.Equal(t, &Annotations{ReadOnly: true, Idempotent: true, OpenWorld: true}, tool.Annotations)
			}},
		{name: "metadata", in: map[string]any{"name": "a", "description": "d", "metadata": map[string]any{"k": "v"}},
			check: func(t *testing.T, tool Tool) { assert.Equal(t, "v", tool.Metadata["k"]) }},
		{name: "missing name", in: map[string]any{"description": "d"}, wantErr: `field "name" is required`},
		{name: "name not a string", in: map[string]any{"name": 3.0, "description": "d"}, wantErr: `field "name" must be a string, got a number`},
		{name: "schema not an object", in: map[string]any{"name": "a", "description": "d", "parameters": "x"}, wantErr: "parameters must be a JSON Schema object, got a string"},
		{name: "hint not a bool", in: map[string]any{"name": "a", "description": "d", "annotations": map[string]any{"readOnlyHint": "yes"}}, wantErr: "annotations.readOnlyHint must be a boolean"},
		{name: "bad name", in: map[string]any{"name": "a b", "description": "d"}, wantErr: "name must match"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tool, err := ToolFromMap(tt.in)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalidTool)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			tt.check(t, tool)
		})
	}
}

func TestToolJSONRoundTrip(t *testing.T) {
	tool, err := NewTool("read_file", "Reads a file.", readFileSchema())
	require.NoError(t, err)
	tool.Annotations = &Annotations{ReadOnly: true}
	tool.Metadata = map[string]any{"group": "fs"}

	data, err := json.Marshal(tool)
	require.NoError(t, err)
	var back Tool
	require.NoError(t, json.Unmarshal(data, &back))
	again, err := json.Marshal(back)
	require.NoError(t, err)
	assert.JSONEq(t, string(data), string(again))
	assert.Equal(t, tool.Name, back.Name)
	assert.Equal(t, tool.Description, back.Description)
	assert.Equal(t, tool.Annotations, back.Annotations)
	assert.Equal(t, tool.Metadata, back.Metadata)
	assert.Contains(t, string(data), `"readOnlyHint":true`)
	assert.Contains(t, string(data), `"destructiveHint":false`, "false hints are kept")
	// The decoded tool validates like the original.
	assert.NoError(t, back.ValidateArguments(map[string]any{"path": "a"}))
	assert.Error(t, back.ValidateArguments(map[string]any{"path": 1.0}))
}

func TestValidateArguments(t *testing.T) {
	tool, err := NewTool("read_file", "Reads a file.", readFileSchema())
	require.NoError(t, err)
	tests := []struct {
		name    string
		args    map[string]any
		wantErr []string
	}{
		{name: "valid", args: map[string]any{"path": "a.go", "offset": 2.0}},
		{name: "integer as Go int", args: map[string]any{"path": "a.go", "offset": 2}},
		{name: "nil args and missing required", args: nil, wantErr: []string{`invalid arguments for tool "read_file": /: missing properties: 'path'`}},
		{name: "wrong type", args: map[string]any{"path": "a", "offset": "2"},
			wantErr: []string{`invalid arguments for tool "read_file": /offset: expected integer, but got string`}},
		{name: "minimum", args: map[string]any{"path": "a", "offset": 0.0}, wantErr: []string{"/offset: must be >= 1"}},
		{name: "every violation listed", args: map[string]any{"offset": "x", "limit": true},
			wantErr: []string{"/: missing properties: 'path'", "/offset: expected integer, but got string", "/limit: expected integer, but got boolean"}},
		{name: "fractional integer", args: map[string]any{"path": "a", "limit": 1.5}, wantErr: []string{"/limit: expected integer, but got number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tool.ValidateArguments(tt.args)
			if len(tt.wantErr) == 0 {
				assert.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrInvalidArguments)
			var ae *ArgumentsError
			require.True(t, errors.As(err, &ae))
			assert.Len(t, ae.Violations, len(tt.wantErr))
			for _, w := range tt.wantErr {
				assert.Contains(t, err.Error(), w)
			}
		})
	}
}

func TestValidateArgumentsGoTypes(t *testing.T) {
	tool, err := NewTool("tag", "Tags things.", objectSchema(map[string]any{
		"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		"count": map[string]any{"type": "integer"},
	}, "tags"))
	require.NoError(t, err)
	assert.NoError(t, tool.ValidateArguments(map[string]any{"tags": []string{"a", "b"}, "count": int16(3)}))
	err = tool.ValidateArguments(map[string]any{"tags": []int{1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "/tags/0: expected string, but got number")
	err = tool.ValidateArguments(map[string]any{"tags": make(chan int)})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrInvalidArguments)
}

func TestValidateArgumentsCompilesOnce(t *testing.T) {
	tool, err := NewTool("read_file", "Reads a file.", readFileSchema())
	require.NoError(t, err)
	first, err := tool.compiledSchema()
	require.NoError(t, err)
	copyOfTool := tool
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for range 50 {
				assert.NoError(t, copyOfTool.ValidateArguments(map[string]any{"path": "x"}))
				assert.Error(t, copyOfTool.ValidateArguments(map[string]any{"path": 1.0}))
			}
		})
	}
	wg.Wait()
	again, err := copyOfTool.compiledSchema()
	require.NoError(t, err)
	assert.Same(t, first, again, "copies share one compiled schema")

	// Replacing the Parameters map is noticed.
	copyOfTool.Parameters = objectSchema(map[string]any{"n": map[string]any{"type": "integer"}}, "n")
	assert.Error(t, copyOfTool.ValidateArguments(map[string]any{"path": "x"}))
	assert.NoError(t, copyOfTool.ValidateArguments(map[string]any{"n": 1.0}))
}

func TestStructLiteralToolValidates(t *testing.T) {
	tool := Tool{Name: "lit", Description: "d", Parameters: readFileSchema()}
	assert.NoError(t, tool.Validate())
	assert.NoError(t, tool.ValidateArguments(map[string]any{"path": "a"}))
	assert.Error(t, tool.ValidateArguments(map[string]any{}))
	built, err := NewToolFrom(Tool{Name: "lit", Description: "d", Annotations: &Annotations{ReadOnly: true}})
	require.NoError(t, err)
	assert.True(t, built.Annotations.ReadOnly)
	assert.Contains(t, built.Parameters, "properties")
}

func TestMustToolPanicsOnInvalid(t *testing.T) {
	assert.Panics(t, func() { MustTool("bad name", "d", nil) })
	assert.NotPanics(t, func() { MustTool("good", "d", nil) })
}

// BenchmarkValidateArguments validates a call against a 5-property schema.
func BenchmarkValidateArguments(b *testing.B) {
	tool := MustTool("search", "Searches.", objectSchema(map[string]any{
		"pattern":    map[string]any{"type": "string", "minLength": 1},
		"path":       map[string]any{"type": "string"},
		"ignoreCase": map[string]any{"type": "boolean"},
		"limit":      map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
		"format":     map[string]any{"type": "string", "enum": []any{"text", "json"}},
	}, "pattern"))
	args := map[string]any{"pattern": "func", "path": "src", "ignoreCase": true, "limit": 100.0, "format": "text"}
	b.ReportAllocs()
	for b.Loop() {
		if err := tool.ValidateArguments(args); err != nil {
			b.Fatal(err)
		}
	}
}

func TestValidateArgumentsRefusesNonJSONNumbers(t *testing.T) {
	tool := MustTool("count", "Counts.", map[string]any{"type": "object", "properties": map[string]any{
		"n":    map[string]any{"type": "integer", "maximum": 10},
		"list": map[string]any{"type": "array", "items": map[string]any{"type": "number"}},
	}})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"NaN", map[string]any{"n": math.NaN()}, "/n: NaN is not a number JSON can hold"},
		{"+Inf", map[string]any{"n": math.Inf(1)}, "/n: +Inf is not a number JSON can hold"},
		{"-Inf nested", map[string]any{"list": []any{1.0, math.Inf(-1)}}, "/list/1: -Inf is not a number JSON can hold"},
		{"bad json.Number", map[string]any{"n": json.Number("12abc")}, `/n: "12abc" is not a valid JSON number`},
		{"empty json.Number", map[string]any{"n": json.Number("")}, `/n: "" is not a valid JSON number`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() { err = tool.ValidateArguments(tc.args) })
			require.ErrorIs(t, err, ErrInvalidArguments)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	require.NoError(t, tool.ValidateArguments(map[string]any{"n": json.Number("7")}))
}

// TestMissingPropertiesAreSorted: the names of missing required arguments
// come in sorted order, whatever order the schema lists them in.
func TestMissingPropertiesAreSorted(t *testing.T) {
	props := map[string]any{}
	for _, n := range []string{"zeta", "alpha", "mid"} {
		props[n] = map[string]any{"type": "string"}
	}
	for _, required := range [][]any{{"zeta", "alpha", "mid"}, {"mid", "zeta", "alpha"}} {
		tool := MustTool("x", "x", map[string]any{"type": "object", "required": required, "properties": props})
		err := tool.ValidateArguments(map[string]any{})
		require.Error(t, err)
		assert.Contains(t, err.Error(), "/: missing properties: 'alpha', 'mid', 'zeta' (add them)")
	}
}

func TestCommandArgumentsLines(t *testing.T) {
	typedErr := errors.New("no such session")
	errNotText := errors.New("not text")
	for _, tc := range []struct {
		name       string
		c          *CommandArguments
		args       map[string]any
		run, typed []string
		err        error
	}{
		{name: "nil", c: nil, args: map[string]any{"command": "ls"}},
		{name: "names", c: &CommandArguments{Names: []string{"command", "cmd"}},
			args: map[string]any{"command": "ls", "cmd": 3}, run: []string{"ls"}},
		{name: "lists", c: &CommandArguments{Names: []string{"command"}, Lists: []string{"commands", "more"}},
			args: map[string]any{"command": "pwd", "commands": []any{"ls", "rm x"}, "more": []string{"id"}}, run: []string{"pwd", "ls", "rm x", "id"}},
		{name: "not text in a list", c: &CommandArguments{Lists: []string{"commands"}},
			args: map[string]any{"commands": []any{"ls", 1}}, err: errNotText},
		{name: "typed", c: &CommandArguments{Typed: func(context.Context, map[string]any) ([]string, error) { return []string{"y"}, nil }},
			args: map[string]any{}, typed: []string{"y"}},
		{name: "typed error", c: &CommandArguments{Names: []string{"command"}, Typed: func(context.Context, map[string]any) ([]string, error) { return nil, typedErr }},
			args: map[string]any{"command": "ls"}, err: typedErr},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, typed, err := tc.c.Lines(t.Context(), tc.args)
			if tc.err == errNotText {
				require.ErrorContains(t, err, `argument "commands" holds a int, not a command line`)
				return
			}
			require.ErrorIs(t, err, tc.err)
			assert.Equal(t, tc.run, run)
			assert.Equal(t, tc.typed, typed)
		})
	}
}
