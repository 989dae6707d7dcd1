package schema

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDropOptionalNullsBounded: a schema of 15 definitions, each an
// anyOf of two references to the next, the last a string (2^15 paths,
// none accepting null), and 5,000 nulls to judge against it: each
// definition is decided once, and every null is dropped.
func TestDropOptionalNullsBounded(t *testing.T) {
	const n = 15
	defs := map[string]any{fmt.Sprint("d", n): map[string]any{"type": "string"}}
	for i := range n {
		next := map[string]any{"$ref": fmt.Sprint("#/$defs/d", i+1)}
		defs[fmt.Sprint("d", i)] = map[string]any{"anyOf": []any{next, next}}
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{"rows": map[string]any{
			"type": "array",
			"items": map[string]any{
				"type":       "object",
				"properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d0"}},
			},
		}},
		"$defs": defs,
	}
	rows := make([]any, 5000)
	want := make([]any, len(rows))
	for i := range rows {
		rows[i] = map[string]any{"x": nil}
		want[i] = map[string]any{}
	}
	done := make(chan map[string]any, 1)
	go func() { done <- DropOptionalNulls(schema, map[string]any{"rows": rows}) }()
	select {
	case got := <-done:
		assert.Equal(t, map[string]any{"rows": want}, got)
	case <-time.After(5 * time.Second):
		t.Fatal("DropOptionalNulls did not finish within 5 s")
	}
}

// FuzzWithoutOptionalNulls: for any schema and arguments, it finishes,
// never modifies its input, and only ever removes null values.
func FuzzWithoutOptionalNulls(f *testing.F) {
	f.Add(`{"type":"object","properties":{"a":{"type":"boolean"}}}`, `{"a":null}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#"}},"required":["b"]}`, `{"a":{"a":{"a":null}},"b":null}`)
	f.Add(`{"properties":{"l":{"type":"array","items":{"properties":{"n":{"enum":[1,null]}}}}}}`, `{"l":[{"n":null},{"n":1},null]}`)
	f.Fuzz(func(t *testing.T, schemaJSON, argsJSON string) {
		var schema, args map[string]any
		if json.Unmarshal([]byte(schemaJSON), &schema) != nil || json.Unmarshal([]byte(argsJSON), &args) != nil {
			return
		}
		before, err := json.Marshal(args)
		require.NoError(t, err)
		out := DropOptionalNulls(schema, args)
		after, err := json.Marshal(args)
		require.NoError(t, err)
		require.JSONEq(t, string(before), string(after), "the input is not modified")
		require.True(t, onlyNullsRemoved(args, out), "%s became %v", argsJSON, out)
	})
}

// onlyNullsRemoved reports whether out is in with some null object
// members left out.
func onlyNullsRemoved(in, out any) bool {
	switch x := in.(type) {
	case map[string]any:
		y, ok := out.(map[string]any)
		if !ok {
			return false
		}
		for k, v := range x {
			w, kept := y[k]
			if !kept {
				if v != nil {
					return false
				}
				continue
			}
			if !onlyNullsRemoved(v, w) {
				return false
			}
		}
		return len(y) <= len(x)
	case []any:
		y, ok := out.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !onlyNullsRemoved(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(in, out)
}

// BenchmarkDropOptionalNulls is the rule's cost on the call of
// BenchmarkValidateArguments: without nulls (every call pays it), and
// with one optional null to drop.
func BenchmarkDropOptionalNulls(b *testing.B) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"pattern":    map[string]any{"type": "string", "minLength": 1},
		"path":       map[string]any{"type": "string"},
		"ignoreCase": map[string]any{"type": "boolean"},
		"limit":      map[string]any{"type": "integer", "minimum": 1, "maximum": 1000},
		"format":     map[string]any{"type": "string", "enum": []any{"text", "json"}},
	}, "required": []any{"pattern"}}
	for _, bc := range []struct {
		name string
		args map[string]any
	}{
		{"no-null", map[string]any{"pattern": "func", "path": "src", "ignoreCase": true, "limit": 100.0, "format": "text"}},
		{"one-null", map[string]any{"pattern": "func", "path": nil, "ignoreCase": true, "limit": 100.0, "format": "text"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = DropOptionalNulls(schema, bc.args)
			}
		})
	}
}
