package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestCallIDsAreDistinct: the parsers kept duplicate and empty call ids
// (OpenAI Responses refused an empty call_id, Gemini made one up), so two
// results could answer one id and a result could answer none. Every
// parser, response and stream, now applies one rule: an empty id gets
// a made-up one (GeneratedCallIDPrefix, GeminiCallIDPrefix for Gemini,
// and the call's position), a repeated id gets "-2", "-3", ... appended.
func TestCallIDsAreDistinct(t *testing.T) {
	// Five calls: ids "a", "", "a", "a-2", "a".
	want := func(prefix string) []string {
		return []string{"a", prefix + "2", "a-2", "a-2-2", "a-3"}
	}
	gen, gem := provider.GeneratedCallIDPrefix, provider.GeminiCallIDPrefix
	tests := []struct {
		name  string
		parse func(json.RawMessage) (agentloop.Response, error)
		body  string
		want  []string
	}{
		{"OpenAI Chat Completions", provider.OpenAIResponse, `{"choices":[{"message":{"role":"assistant","tool_calls":[
			{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},
			{"type":"function","function":{"name":"f","arguments":"{}"}},
			{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},
			{"id":"a-2","type":"function","function":{"name":"f","arguments":"{}"}},
			{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}}]}}]}`, want(gen)},
		{"OpenAI Responses", provider.OpenAIResponsesResponse, `{"output":[
			{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
			{"type":"function_call","name":"f","arguments":"{}"},
			{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},
			{"type":"function_call","call_id":"a-2","name":"f","arguments":"{}"},
			{"type":"function_call","call_id":"a","name":"f","arguments":"{}"}]}`, want(gen)},
		{"Anthropic", provider.AnthropicResponse, `{"content":[
			{"type":"tool_use","id":"a","name":"f","input":{}},
			{"type":"tool_use","name":"f","input":{}},
			{"type":"tool_use","id":"a","name":"f","input":{}},
			{"type":"tool_use","id":"a-2","name":"f","input":{}},
			{"type":"tool_use","id":"a","name":"f","input":{}}]}`, want(gen)},
		{"Gemini", provider.GeminiResponse, `{"candidates":[{"content":{"role":"model","parts":[
			{"functionCall":{"id":"a","name":"f","args":{}}},
			{"functionCall":{"name":"f","args":{}}},
			{"functionCall":{"id":"a","name":"f","args":{}}},
			{"functionCall":{"id":"a-2","name":"f","args":{}}},
			{"functionCall":{"id":"a","name":"f","args":{}}}]}}]}`, want(gem)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			resp, err := tc.parse(json.RawMessage(tc.body))
			require.NoError(t, err)
			var ids []string
			for _, c := range resp.ToolCalls {
				ids = append(ids, c.ID)
			}
			assert.Equal(t, tc.want, ids)
		})
	}
	t.Run("OpenAI stream", func(t *testing.T) {
		s := &provider.OpenAIStream{}
		for _, chunk := range []string{
			`{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"x","function":{"name":"f","arguments":"{}"}}]}}]}`,
			`{"choices":[{"delta":{"tool_calls":[{"index":2,"function":{"name":"f","arguments":"{}"}}]}}]}`,
		} {
			require.NoError(t, s.Add([]byte(chunk)))
		}
		resp, err := s.Response()
		require.NoError(t, err)
		require.Len(t, resp.ToolCalls, 3)
		assert.Equal(t, []string{"x", "x-2", gen + "3"}, []string{resp.ToolCalls[0].ID, resp.ToolCalls[1].ID, resp.ToolCalls[2].ID})
	})
}
