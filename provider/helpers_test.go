package provider_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func testdata(t testing.TB, name string) json.RawMessage {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	require.True(t, json.Valid(data), "%s is not valid JSON", name)
	return data
}

// assertJSON checks that v encodes to the JSON in testdata/name.
func assertJSON(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.Marshal(v)
	require.NoError(t, err)
	assert.JSONEq(t, string(testdata(t, name)), string(got))
}

func weatherTool() llmtoolkit.Tool {
	return llmtoolkit.MustTool("get_current_weather", "Get the current weather in a given location", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"location": map[string]any{"type": "string", "description": "The city and state, e.g. San Francisco, CA"},
			"unit":     map[string]any{"type": "string", "enum": []any{"celsius", "fahrenheit"}},
		},
		"required": []any{"location"},
	})
}
