package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestMalformedCallsAreKept: arguments that are not a JSON object no longer
// fail the parse; the call comes back with the raw text and the error.
func TestMalformedCallsAreKept(t *testing.T) {
	tests := []struct {
		name, payload, raw, reason string
		parse                      func(json.RawMessage) ([]llmtoolkit.Call, error)
	}{
		{"OpenAI chat, broken JSON", `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`,
			`{"a":`, "not valid JSON", provider.OpenAIToolCalls},
		{"OpenAI chat, an array", `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"[1]"}}]}`,
			`[1]`, "must be a JSON object, got an array", provider.OpenAIToolCalls},
		{"OpenAI Responses, broken JSON", `{"status":"completed","output":[{"type":"function_call","id":"fc_1","call_id":"c","name":"f","arguments":"{\"a\":1,,}"}]}`,
			`{"a":1,,}`, "not valid JSON at byte", provider.OpenAIResponsesToolCalls},
		{"Anthropic, input not an object", `{"content":[{"type":"tool_use","id":"c","name":"f","input":[1]}]}`,
			`[1]`, "must be a JSON object", provider.AnthropicToolCalls},
		{"Gemini, args not an object", `{"parts":[{"functionCall":{"id":"c","name":"f","args":"x"}}]}`,
			`"x"`, "must be a JSON object", provider.GeminiToolCalls},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := tc.parse(json.RawMessage(tc.payload))
			require.NoError(t, err, "a malformed call must not fail the model call")
			require.Len(t, calls, 1)
			c := calls[0]
			assert.Equal(t, "c", c.ID)
			assert.Equal(t, "f", c.Name)
			assert.Equal(t, map[string]any{}, c.Arguments)
			require.NotNil(t, c.Malformed)
			assert.Equal(t, tc.raw, c.Malformed.Raw)
			assert.Contains(t, c.Malformed.Reason, tc.reason)
		})
	}
}

// TestMalformedCallGoesBackToTheModel runs a conversation in which the
// model first sends broken arguments, then a call to a tool it invented,
// then a good call: each mistake reaches the model as an error result it
// can act on, the loop goes on, and the replayed request keeps the raw
// arguments as the model sent them.
func TestMalformedCallGoesBackToTheModel(t *testing.T) {
	responses := []string{
		`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"location\": \"Paris\""}}]}}]}`,
		`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_2","type":"function","function":{"name":"get_forecast","arguments":"{\"location\":\"Paris\"}"}}]}}]}`,
		`{"choices":[{"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[{"id":"call_3","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]}}]}`,
		`{"choices":[{"finish_reason":"stop","message":{"role":"assistant","content":"18°C in Paris."}}]}`,
	}
	api := &fakeAPI{t: t, w: wires["openai-chat"]}
	for _, r := range responses {
		api.responses = append(api.responses, json.RawMessage(r))
	}
	tools := weatherTools()
	var results []llmtoolkit.Result
	resp, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("Weather in Paris?")}, api.send,
		agentloop.Options{Resolver: tools, OnIteration: func(it agentloop.Iteration) { results = append(results, it.Results...) }})
	require.NoError(t, err)
	assert.Equal(t, "18°C in Paris.", resp.Content)
	require.Len(t, results, 3)

	assert.True(t, results[0].IsError)
	assert.ErrorIs(t, results[0].Err, llmtoolkit.ErrInvalidCall)
	assert.Contains(t, results[0].Content, `{\"location\": \"Paris\"`, "the error quotes what the model sent")
	assert.Contains(t, results[0].Content, "not valid JSON")
	assert.True(t, results[1].IsError)
	assert.ErrorIs(t, results[1].Err, llmtoolkit.ErrUnknownTool)
	assert.Contains(t, results[1].Content, "get_weather", "an invented name is answered with the available tools")
	assert.False(t, results[2].IsError)
	assert.Len(t, tools.CallsTo("get_weather"), 1, "the malformed call never reached the tool")

	// The second request replays the broken arguments as sent, and the
	// error result after them.
	assert.Equal(t, `{"location": "Paris"`, jsonString(t, field(t, api.requests[1], "messages.1.tool_calls.0.function.arguments")))
	assert.Contains(t, jsonString(t, field(t, api.requests[1], "messages.2.content")), "Error: ")
	require.NotNil(t, history[1].ToolCalls[0].Malformed)
}

// TestMalformedCallTripsTheBreaker: the same malformed call again and again
// counts as the same failure.
func TestMalformedCallTripsTheBreaker(t *testing.T) {
	bad := llmtoolkit.ParseCallLenient("", "get_weather", `{"location":`)
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(bad), llmtoolkittest.CallTools(bad), llmtoolkittest.CallTools(bad), llmtoolkittest.Reply("never"))
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("hi")}, model.Send,
		agentloop.Options{Resolver: weatherTools(), BreakerThreshold: 3})
	var cbe *agentloop.CircuitBreakerError
	require.ErrorAs(t, err, &cbe)
	assert.Equal(t, "get_weather", cbe.Tool)
	assert.Contains(t, cbe.Message, "not valid JSON")
}

// TestMalformedCallNeverRunsUnlistedTools: a resolver that lists no tools
// (a ResolverFunc) is not called with the empty arguments of a malformed
// call.
func TestMalformedCallNeverRunsUnlistedTools(t *testing.T) {
	ran := false
	r := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) {
		ran = true
		return "", errors.New("should not run")
	})
	res := llmtoolkit.Execute(t.Context(), r, llmtoolkit.MalformedCall("c", "f", "{", errors.New("unexpected end of JSON input")))
	assert.False(t, ran)
	assert.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidCall)
	assert.Contains(t, res.Content, "unexpected end of JSON input")
}
