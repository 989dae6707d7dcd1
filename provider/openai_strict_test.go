package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func TestOpenAIStrictSchema(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{
			name: "optional properties become required and nullable",
			in:   `{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":"string","enum":["c","f"]},"days":{"type":"integer","minimum":1}},"required":["location"]}`,
			want: `{"type":"object","properties":{"location":{"type":"string"},"unit":{"type":["string","null"],"enum":["c","f",null]},"days":{"type":["integer","null"],"minimum":1}},"required":["days","location","unit"],"additionalProperties":false}`,
		},
		{
			name: "nested objects and arrays",
			in:   `{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"old":{"type":"string"},"new":{"type":"string"}},"required":["old"]}}},"required":["edits"]}`,
			want: `{"type":"object","properties":{"edits":{"type":"array","items":{"type":"object","properties":{"new":{"type":["string","null"]},"old":{"type":"string"}},"required":["new","old"],"additionalProperties":false}}},"required":["edits"],"additionalProperties":false}`,
		},
		{
			name: "refs kept, definitions converted, optional ref wrapped",
			in:   `{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":"number"}}}},"properties":{"p":{"$ref":"#/$defs/P","description":"where"}}}`,
			want: `{"type":"object","$defs":{"P":{"type":"object","properties":{"x":{"type":["number","null"]}},"required":["x"],"additionalProperties":false}},"properties":{"p":{"anyOf":[{"$ref":"#/$defs/P"},{"type":"null"}],"description":"where"}},"required":["p"],"additionalProperties":false}`,
		},
		{
			name: "oneOf becomes anyOf; unsupported keywords noted",
			in:   `{"type":"object","properties":{"v":{"oneOf":[{"type":"string","minLength":2,"format":"uri"},{"type":"number"}]}},"required":["v"],"$schema":"x","default":{}}`,
			want: `{"type":"object","properties":{"v":{"anyOf":[{"type":"string","description":"Constraints: format: uri; minLength: 2."},{"type":"number"}]}},"required":["v"],"additionalProperties":false}`,
		},
		{
			name: "no parameters",
			in:   `{"type":"object"}`,
			want: `{"type":"object","properties":{},"required":[],"additionalProperties":false}`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &in))
			before := mustJSON(t, in)
			out, err := provider.OpenAIStrictSchema(in)
			require.NoError(t, err)
			assert.JSONEq(t, tc.want, string(mustJSON(t, out)))
			assert.JSONEq(t, string(before), string(mustJSON(t, in)), "the input is not modified")
		})
	}
}

func TestOpenAIStrictSchemaSaysWhyNot(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"root not an object", `{"type":"string"}`, "at the root"},
		{"map", `{"type":"object","properties":{"env":{"type":"object","additionalProperties":{"type":"string"}}}}`, "at /properties/env: the object is a map"},
		{"open object", `{"type":"object","properties":{"x":{"type":"object"}}}`, "at /properties/x: the object has no properties"},
		{"additionalProperties true", `{"type":"object","additionalProperties":true,"properties":{}}`, "additionalProperties true"},
		{"no type", `{"type":"object","properties":{"any":{}}}`, "at /properties/any: the schema has no type"},
		{"true schema", `{"type":"object","properties":{"any":true}}`, "/properties/any: a property must be a schema object"},
		{"array without items", `{"type":"object","properties":{"l":{"type":"array"}}}`, `needs "items"`},
		{"tuple", `{"type":"object","properties":{"l":{"type":"array","items":[{"type":"string"}]}}}`, "tuple"},
		{"allOf", `{"type":"object","properties":{"a":{"allOf":[{"type":"string"}]}}}`, "allOf is not supported"},
		{"remote ref", `{"type":"object","properties":{"a":{"$ref":"https://x/y.json"}}}`, "outside the schema"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var in map[string]any
			require.NoError(t, json.Unmarshal([]byte(tc.in), &in))
			_, err := provider.OpenAIStrictSchema(in)
			require.ErrorIs(t, err, provider.ErrNotStrict)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
	deep := map[string]any{"type": "string"}
	for range 12 {
		deep = map[string]any{"type": "object", "properties": map[string]any{"a": deep}, "required": []any{"a"}}
	}
	_, err := provider.OpenAIStrictSchema(deep)
	require.ErrorIs(t, err, provider.ErrNotStrict)
	assert.Contains(t, err.Error(), "nested more than 10 levels")
}

func TestOpenAIStrictTools(t *testing.T) {
	w := weatherTool()
	chat, err := provider.OpenAIStrictTool(w)
	require.NoError(t, err)
	data := mustJSON(t, []provider.OpenAITool{chat})
	assert.Contains(t, string(data), `"strict":true`)
	checkOpenAIChatSDK(t, mustJSON(t, map[string]any{"model": "m", "messages": []any{map[string]any{"role": "user", "content": "hi"}}, "tools": []provider.OpenAITool{chat}}))

	resp, err := provider.OpenAIResponsesStrictTool(w)
	require.NoError(t, err)
	assert.True(t, resp.Strict)
	assert.Equal(t, false, resp.Parameters["additionalProperties"])
	checkOpenAIResponsesSDK(t, mustJSON(t, map[string]any{"model": "m", "input": "hi", "tools": []provider.OpenAIResponsesTool{resp}}))

	open := llmtoolkit.MustTool("set_env", "Sets variables.", map[string]any{
		"type": "object", "properties": map[string]any{"vars": map[string]any{"type": "object", "additionalProperties": map[string]any{"type": "string"}}},
	})
	_, err = provider.OpenAIStrictTool(open)
	require.ErrorIs(t, err, provider.ErrNotStrict)
	assert.Contains(t, err.Error(), `tool "set_env"`)
	_, err = provider.OpenAIResponsesStrictTool(open)
	require.ErrorIs(t, err, provider.ErrNotStrict)
}

// TestOpenAIStrictArgumentsValidate: what a model sends under a strict
// schema (null for every optional property) validates against the
// original schema once OpenAIStrictArguments has run.
func TestOpenAIStrictArgumentsValidate(t *testing.T) {
	tool := llmtoolkit.MustTool("search", "Searches.", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string"},
			"limit": map[string]any{"type": "integer"},
			"note":  map[string]any{"type": []any{"string", "null"}},
			"filter": map[string]any{"type": "object", "properties": map[string]any{
				"lang": map[string]any{"type": "string"}, "year": map[string]any{"type": "integer"},
			}, "required": []any{"lang"}},
		},
		"required": []any{"query", "filter"},
	})
	args := map[string]any{"query": "go", "limit": nil, "note": nil, "filter": map[string]any{"lang": "en", "year": nil}}
	require.Error(t, tool.ValidateArguments(args), "nulls for optional properties fail the original schema")
	fixed := provider.OpenAIStrictArguments(tool.Parameters, args)
	require.NoError(t, tool.ValidateArguments(fixed))
	assert.Equal(t, map[string]any{"query": "go", "note": nil, "filter": map[string]any{"lang": "en"}}, fixed, "a property that accepts null keeps it")
	assert.Contains(t, args, "limit", "args is not modified")
}

func FuzzOpenAIStrictSchema(f *testing.F) {
	for _, s := range []string{
		`{"type":"object","properties":{"a":{"type":"string"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}},"$defs":{"x":{"type":"object"}}}`,
		`{"type":"object","properties":{"a":{"anyOf":[{"type":"null"},{"enum":[1]}]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var in map[string]any
		if json.Unmarshal(data, &in) != nil {
			return
		}
		out, err := provider.OpenAIStrictSchema(in)
		if err != nil {
			return
		}
		if out["additionalProperties"] != false {
			t.Fatalf("the root is not closed: %v", out)
		}
		if _, err := json.Marshal(out); err != nil {
			t.Fatalf("output does not encode: %v", err)
		}
	})
}
