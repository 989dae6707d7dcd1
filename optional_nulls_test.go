package llmtoolkit_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestExecuteOptionalNulls: a null for an optional property whose schema
// does not accept null is the property left out (what a provider's strict
// mode sends): the call runs without it. Any other null, and any wrong
// type, is still refused with the validator's message.
func TestExecuteOptionalNulls(t *testing.T) {
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region":   map[string]any{"type": "string"},
			"verbose":  map[string]any{"type": "boolean"},
			"maybe":    map[string]any{"type": []any{"boolean", "null"}},
			"either":   map[string]any{"anyOf": []any{map[string]any{"type": "integer"}, map[string]any{"type": "null"}}},
			"color":    map[string]any{"enum": []any{"red", "blue"}},
			"limits":   map[string]any{"$ref": "#/$defs/limits"},
			"filters":  map[string]any{"type": "array", "items": map[string]any{"$ref": "#/$defs/filter"}},
			"anything": map[string]any{"description": "any JSON value"},
		},
		"required": []any{"region"},
		"$defs": map[string]any{
			"limits": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"max": map[string]any{"type": "integer"},
					"min": map[string]any{"type": "integer"},
				},
				"required": []any{"max"},
			},
			"filter": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"field": map[string]any{"type": "string"},
					"not":   map[string]any{"type": "boolean"},
				},
				"required": []any{"field"},
			},
		},
	}
	tool, err := llmtoolkit.NewTool("query", "Runs a query.", schema)
	require.NoError(t, err)

	tests := []struct {
		name    string
		args    string
		want    string // the arguments the resolver receives, as JSON
		refused string // or the refusal's message
	}{
		{name: "optional boolean null is absent", args: `{"region":"eu","verbose":null}`, want: `{"region":"eu"}`},
		{name: "optional enum null is absent", args: `{"region":"eu","color":null}`, want: `{"region":"eu"}`},
		{name: "optional object null is absent", args: `{"region":"eu","limits":null}`, want: `{"region":"eu"}`},
		{name: "nested optional null through a ref", args: `{"region":"eu","limits":{"max":3,"min":null}}`, want: `{"limits":{"max":3},"region":"eu"}`},
		{name: "optional null in array items", args: `{"region":"eu","filters":[{"field":"a","not":null},{"field":"b","not":true}]}`, want: `{"filters":[{"field":"a"},{"field":"b","not":true}],"region":"eu"}`},
		{name: "nullable type keeps null", args: `{"region":"eu","maybe":null}`, want: `{"maybe":null,"region":"eu"}`},
		{name: "nullable anyOf keeps null", args: `{"region":"eu","either":null}`, want: `{"either":null,"region":"eu"}`},
		{name: "untyped keeps null", args: `{"region":"eu","anything":null}`, want: `{"anything":null,"region":"eu"}`},
		{name: "unknown property keeps null", args: `{"region":"eu","other":null}`, want: `{"other":null,"region":"eu"}`},
		{name: "required null is refused", args: `{"region":null}`, refused: `invalid arguments for tool "query": /region: expected string, but got null`},
		{name: "nested required null is refused", args: `{"region":"eu","limits":{"max":null}}`, refused: `/limits/max: expected integer, but got null`},
		{name: "wrong type is refused", args: `{"region":"eu","verbose":"yes"}`, refused: `/verbose: expected boolean, but got string`},
		{name: "item required null is refused", args: `{"region":"eu","filters":[{"field":null}]}`, refused: `/filters/0/field: expected string, but got null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got map[string]any
			r := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(_ context.Context, c llmtoolkit.Call) (string, error) {
				got = c.Arguments
				return "ok", nil
			}), []llmtoolkit.Tool{tool})
			call, err := llmtoolkit.ParseCall("1", "query", tt.args)
			require.NoError(t, err)
			before, err := json.Marshal(call.Arguments)
			require.NoError(t, err)

			res := llmtoolkit.Execute(context.Background(), r, call)

			after, err := json.Marshal(call.Arguments)
			require.NoError(t, err)
			assert.JSONEq(t, string(before), string(after), "the caller's arguments are not modified")
			if tt.refused != "" {
				assert.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
				assert.Contains(t, res.Content, tt.refused)
				assert.Nil(t, got, "a refused call never reaches the resolver")
				return
			}
			require.False(t, res.IsError, res.Content)
			data, err := json.Marshal(got)
			require.NoError(t, err)
			assert.JSONEq(t, tt.want, string(data))
		})
	}
}
