package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func TestOpenAITools(t *testing.T) {
	assertJSON(t, "openai_tools.json", provider.OpenAITools([]llmtoolkit.Tool{weatherTool()}))
	assert.Empty(t, provider.OpenAITools(nil))
}

func TestOpenAIToolCalls(t *testing.T) {
	want := []llmtoolkit.Call{
		{ID: "call_abc123", Name: "get_current_weather", Arguments: map[string]any{"location": "Boston, MA", "unit": "celsius"}},
		{ID: "call_def456", Name: "get_time", Arguments: map[string]any{}},
	}
	body := testdata(t, "openai_response_tool_calls.json")
	calls, err := provider.OpenAIToolCalls(body)
	require.NoError(t, err)
	assert.Equal(t, want, calls)

	// The message alone gives the same calls.
	var resp struct {
		Choices []struct {
			Message json.RawMessage `json:"message"`
		} `json:"choices"`
	}
	require.NoError(t, json.Unmarshal(body, &resp))
	calls, err = provider.OpenAIToolCalls(resp.Choices[0].Message)
	require.NoError(t, err)
	assert.Equal(t, want, calls)

	calls, err = provider.OpenAIToolCalls(testdata(t, "openai_response_text.json"))
	require.NoError(t, err)
	assert.Empty(t, calls)
}

func TestOpenAIToolCallsErrors(t *testing.T) {
	tests := []struct {
		name, payload, want string
		is                  error
	}{
		{"custom tool type", `{"role":"assistant","tool_calls":[{"id":"c","type":"custom","custom":{"name":"f","input":"x"}}]}`, `type "custom"`, provider.ErrInvalidPayload},
		{"no function name", `{"role":"assistant","tool_calls":[{"id":"c","type":"function","function":{"arguments":"{}"}}]}`, "no function name", provider.ErrInvalidPayload},
		{"no choices", `{"object":"chat.completion","choices":[]}`, "no choices", provider.ErrInvalidPayload},
		{"empty", ``, "empty", provider.ErrInvalidPayload},
		{"not JSON", `<html>`, "OpenAI", provider.ErrInvalidPayload},
		{"tool_calls not an array", `{"role":"assistant","tool_calls":{}}`, "OpenAI", provider.ErrInvalidPayload},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			calls, err := provider.OpenAIToolCalls(json.RawMessage(tc.payload))
			require.ErrorIs(t, err, tc.is)
			assert.Contains(t, err.Error(), tc.want)
			assert.Nil(t, calls)
		})
	}
}

func TestOpenAIToolMessage(t *testing.T) {
	msg := provider.OpenAIToolMessage(llmtoolkit.Result{ToolCallID: "call_abc123", Name: "get_current_weather", Content: "22 degrees"})
	got, err := json.Marshal(msg)
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"tool","tool_call_id":"call_abc123","content":"22 degrees"}`, string(got))

	msg = provider.OpenAIToolMessage(llmtoolkit.Result{ToolCallID: "c", Content: "city not found", IsError: true})
	assert.Equal(t, "Error: city not found", msg.Content)
	assert.Equal(t, "Error: x", provider.OpenAIToolMessage(llmtoolkit.Result{Content: "Error: x", IsError: true}).Content)
}

func TestOpenAIAssistantMessageRoundTrip(t *testing.T) {
	calls := []llmtoolkit.Call{
		{ID: "c1", Name: "a", Arguments: map[string]any{"n": 1.5, "s": "x", "l": []any{"y"}}},
		{ID: "c2", Name: "b"},
	}
	msg, err := provider.OpenAIAssistantMessage("", calls)
	require.NoError(t, err)
	data, err := json.Marshal(msg)
	require.NoError(t, err)
	assert.Contains(t, string(data), `"content":null`)
	back, err := provider.OpenAIToolCalls(data)
	require.NoError(t, err)
	calls[1].Arguments = map[string]any{}
	assert.Equal(t, calls, back)

	_, err = provider.OpenAIAssistantMessage("", []llmtoolkit.Call{{Name: "bad", Arguments: map[string]any{"ch": make(chan int)}}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "bad")
}

func TestOpenAIMessages(t *testing.T) {
	history := []agentloop.Message{
		agentloop.SystemMessage("You are a weather bot."),
		agentloop.UserMessage("What's the weather like in Boston today?"),
		agentloop.AssistantMessage("", llmtoolkit.Call{ID: "call_abc123", Name: "get_current_weather", Arguments: map[string]any{"location": "Boston, MA", "unit": "celsius"}}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: "call_abc123", Name: "get_current_weather", Content: "22 degrees, sunny"}),
		agentloop.AssistantMessage("It is 22 degrees in Boston."),
	}
	msgs, err := provider.OpenAIMessages(history)
	require.NoError(t, err)
	assertJSON(t, "openai_messages.json", msgs)

	_, err = provider.OpenAIMessages([]agentloop.Message{{Role: "robot"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"robot"`)
}

func TestOpenAIResponse(t *testing.T) {
	resp, err := provider.OpenAIResponse(testdata(t, "openai_response_tool_calls.json"))
	require.NoError(t, err)
	assert.Empty(t, resp.Content)
	assert.Len(t, resp.ToolCalls, 2)
	assert.Equal(t, "tool_calls", resp.StopReason)
	assert.Equal(t, agentloop.Usage{InputTokens: 82, OutputTokens: 17, ContextTokens: 82}, resp.Usage)

	resp, err = provider.OpenAIResponse(testdata(t, "openai_response_text.json"))
	require.NoError(t, err)
	assert.Equal(t, agentloop.Response{Content: "It is 22 degrees in Boston.", StopReason: "stop", Usage: agentloop.Usage{InputTokens: 120, OutputTokens: 9, ContextTokens: 120}, Model: "gpt-4o-mini"}, resp)
}

func FuzzOpenAIToolCalls(f *testing.F) {
	f.Add([]byte(testdata(f, "openai_response_tool_calls.json")))
	f.Add([]byte(`{"role":"assistant","tool_calls":[{"function":{"name":"f","arguments":"{}"}}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		calls, err := provider.OpenAIResponse(data)
		if err != nil {
			return
		}
		for _, c := range calls.ToolCalls {
			if c.Name == "" || c.Arguments == nil {
				t.Fatalf("call without name or arguments: %+v", c)
			}
		}
	})
}
