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

func TestAnthropicTools(t *testing.T) {
	w := weatherTool()
	w.Name = "get_weather"
	assertJSON(t, "anthropic_tools.json", provider.AnthropicTools([]llmtoolkit.Tool{w}))
	// A struct-literal tool without parameters still gets a valid schema.
	out := provider.AnthropicTools([]llmtoolkit.Tool{{Name: "ping", Description: "Ping."}})
	assert.Equal(t, "object", out[0].InputSchema["type"])
}

var anthropicCalls = []llmtoolkit.Call{
	{ID: "toolu_01A09q90qw90lq917835lq9", Name: "get_weather", Arguments: map[string]any{"location": "San Francisco, CA", "unit": "celsius"}},
	{ID: "toolu_01B2c3d4e5f6g7h8i9j0", Name: "get_time", Arguments: map[string]any{}},
}

func TestAnthropicToolCalls(t *testing.T) {
	body := testdata(t, "anthropic_response_tool_use.json")
	calls, err := provider.AnthropicToolCalls(body)
	require.NoError(t, err)
	assert.Equal(t, anthropicCalls, calls)

	var msg struct {
		Content json.RawMessage `json:"content"`
	}
	require.NoError(t, json.Unmarshal(body, &msg))
	calls, err = provider.AnthropicToolCalls(msg.Content) // the content array alone
	require.NoError(t, err)
	assert.Equal(t, anthropicCalls, calls)

	calls, err = provider.AnthropicToolCalls(json.RawMessage(`{"role":"assistant","content":"plain text"}`))
	require.NoError(t, err)
	assert.Empty(t, calls)
}

func TestAnthropicToolCallsErrors(t *testing.T) {
	tests := []struct{ name, payload, want string }{
		{"no name", `{"content":[{"type":"tool_use","id":"t","input":{}}]}`, "content[0]"},
		{"no content", `{"role":"assistant"}`, `no "content"`},
		{"content a number", `{"content":3}`, "array of blocks or a string"},
		{"not JSON", `nope`, "Anthropic"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.AnthropicToolCalls(json.RawMessage(tc.payload))
			require.ErrorIs(t, err, provider.ErrInvalidPayload)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestAnthropicToolResult(t *testing.T) {
	for _, tc := range []struct {
		res  llmtoolkit.Result
		want string
	}{
		{llmtoolkit.Result{ToolCallID: "toolu_1", Name: "get_weather", Content: "15 degrees"},
			`{"type":"tool_result","tool_use_id":"toolu_1","content":"15 degrees"}`},
		{llmtoolkit.Result{ToolCallID: "toolu_2", Content: "ConnectionError: the weather service API is not available", IsError: true},
			`{"type":"tool_result","tool_use_id":"toolu_2","content":"ConnectionError: the weather service API is not available","is_error":true}`},
	} {
		got, err := json.Marshal(provider.AnthropicToolResult(tc.res))
		require.NoError(t, err)
		assert.JSONEq(t, tc.want, string(got))
	}
	msg := provider.AnthropicToolResultsMessage([]llmtoolkit.Result{{ToolCallID: "a"}, {ToolCallID: "b"}})
	assert.Equal(t, "user", msg.Role)
	require.Len(t, msg.Content, 2)
	assert.Equal(t, "b", msg.Content[1].ToolUseID)

	got, err := json.Marshal(provider.AnthropicToolUse(llmtoolkit.Call{ID: "t", Name: "f"}))
	require.NoError(t, err)
	assert.JSONEq(t, `{"type":"tool_use","id":"t","name":"f","input":{}}`, string(got), "an empty input is still written")
}

func TestAnthropicMessages(t *testing.T) {
	history := []agentloop.Message{
		agentloop.SystemMessage("You are a weather bot."),
		agentloop.UserMessage("What's the weather like in San Francisco?"),
		agentloop.AssistantMessage("I'll check the current weather in San Francisco for you.", anthropicCalls...),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: anthropicCalls[0].ID, Name: "get_weather", Content: "15 degrees"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: anthropicCalls[1].ID, Name: "get_time", Content: "clock unavailable", IsError: true}),
	}
	system, msgs, err := provider.AnthropicMessages(history)
	require.NoError(t, err)
	assertJSON(t, "anthropic_messages.json", map[string]any{"system": system, "messages": msgs})

	_, _, err = provider.AnthropicMessages([]agentloop.Message{{Role: "robot"}})
	require.Error(t, err)
}

func TestAnthropicResponse(t *testing.T) {
	resp, err := provider.AnthropicResponse(testdata(t, "anthropic_response_tool_use.json"))
	require.NoError(t, err)
	assert.Equal(t, agentloop.Response{
		Content:    "I'll check the current weather in San Francisco for you.",
		ToolCalls:  anthropicCalls,
		StopReason: "tool_use",
		Usage:      agentloop.Usage{InputTokens: 472, OutputTokens: 91, ContextTokens: 472},
		Model:      "claude-sonnet-4-5",
	}, resp)
}

func FuzzAnthropicResponse(f *testing.F) {
	f.Add([]byte(testdata(f, "anthropic_response_tool_use.json")))
	f.Add([]byte(`[{"type":"tool_use","name":"x","input":null}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := provider.AnthropicResponse(data)
		if err != nil {
			return
		}
		for _, c := range resp.ToolCalls {
			if c.Name == "" || c.Arguments == nil {
				t.Fatalf("call without name or arguments: %+v", c)
			}
		}
	})
}
