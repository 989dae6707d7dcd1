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

// TestReplayAfterEdit: when a host edits an assistant message after the
// answer was parsed, the converters no longer replay the stale blocks
// verbatim but keep the reasoning state in the order the APIs require.
func TestReplayAfterEdit(t *testing.T) {
	t.Run("anthropic: thinking blocks first, then text and calls", func(t *testing.T) {
		resp, err := provider.AnthropicResponse(testdata(t, "anthropic_response_redacted_thinking.json"))
		require.NoError(t, err)
		m := resp.Message()
		m.Content = "Now the time."
		am, ok := provider.AnthropicAssistantMessage(m)
		require.True(t, ok)
		got := mustJSON(t, am.Content)
		blocks := field(t, testdata(t, "anthropic_response_redacted_thinking.json"), "content")
		assert.JSONEq(t, `[`+string(field(t, blocks, "0"))+`,`+string(field(t, blocks, "1"))+`,
			{"type":"text","text":"Now the time."},
			{"type":"tool_use","id":"toolu_01A4xYcXG5qzbRVmyRt8Ggkm","name":"get_time","input":{"timezone":"Asia/Tokyo"}}]`, string(got))
	})
	t.Run("gemini: each call keeps its own signature", func(t *testing.T) {
		resp, err := provider.GeminiResponse(testdata(t, "gemini3_response_parallel_calls.json"))
		require.NoError(t, err)
		m := agentloop.AssistantMessage("", resp.ToolCalls...) // stored without the turn's parts
		c, ok := provider.GeminiModelContent(m)
		require.True(t, ok)
		assert.JSONEq(t, string(field(t, testdata(t, "gemini3_response_parallel_calls.json"), "candidates.0.content.parts")), string(mustJSON(t, c.Parts)))
	})
	t.Run("openai responses: reasoning items first, calls keep their item ids", func(t *testing.T) {
		resp, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_function_call.json"))
		require.NoError(t, err)
		m := resp.Message()
		m.Content = "Checking."
		items, err := provider.OpenAIResponsesAssistantItems(m)
		require.NoError(t, err)
		out := testdata(t, "openai_responses_function_call.json")
		assert.JSONEq(t, `[`+string(field(t, out, "output.0"))+`,
			{"type":"message","role":"assistant","content":"Checking."},
			{"type":"function_call","id":"fc_6820f3855b6881918dd5ffd5d7a9c1410ac5ba57aafcbac7","call_id":"call_Vr8ltxfbeaySrWoRrsjhzSlV","name":"get_weather","arguments":"{\"location\":\"Paris\"}"}]`,
			string(mustJSON(t, items)))
	})
	t.Run("state that does not decode is ignored", func(t *testing.T) {
		m := agentloop.AssistantMessage("hi")
		m.Provider = llmtoolkit.ProviderState{provider.StateAnthropic: json.RawMessage(`"garbage"`), provider.StateGemini: json.RawMessage(`{"parts":3}`)}
		am, ok := provider.AnthropicAssistantMessage(m)
		require.True(t, ok)
		assert.JSONEq(t, `[{"type":"text","text":"hi"}]`, string(mustJSON(t, am.Content)))
		c, ok := provider.GeminiModelContent(m)
		require.True(t, ok)
		assert.JSONEq(t, `[{"text":"hi"}]`, string(mustJSON(t, c.Parts)))
	})
}

// TestEmptyAssistantTurnIsLeftOut: a model turn with no text and no calls
// used to become {"role":"assistant","content":null} (Anthropic) and
// {"role":"model","parts":[{}]} (Gemini), both refused.
func TestEmptyAssistantTurnIsLeftOut(t *testing.T) {
	history := []agentloop.Message{
		agentloop.UserMessage("hi"),
		agentloop.AssistantMessage(""),
		agentloop.UserMessage("are you there?"),
	}
	_, msgs, err := provider.AnthropicMessages(history)
	require.NoError(t, err)
	data := string(mustJSON(t, msgs))
	assert.NotContains(t, data, `null`)
	assert.NotContains(t, data, `"assistant"`)
	checkAnthropicSDK(t, mustJSON(t, map[string]any{"model": "m", "max_tokens": 1, "messages": msgs}))

	_, contents, err := provider.GeminiContents(history)
	require.NoError(t, err)
	assert.JSONEq(t, `[{"role":"user","parts":[{"text":"hi"},{"text":"are you there?"}]}]`, string(mustJSON(t, contents)))

	input, err := provider.OpenAIResponsesInput(history)
	require.NoError(t, err)
	assert.Len(t, input, 2)
}

func TestOpenAIResponsesTools(t *testing.T) {
	assertJSON(t, "openai_responses_tools.json", provider.OpenAIResponsesTools([]llmtoolkit.Tool{weatherTool()}))
	out := provider.OpenAIResponsesTools([]llmtoolkit.Tool{{Name: "ping", Description: "Ping."}})
	assert.JSONEq(t, `[{"type":"function","name":"ping","description":"Ping.","parameters":{"type":"object","properties":{}},"strict":false}]`, string(mustJSON(t, out)))
	checkOpenAIResponsesSDK(t, mustJSON(t, map[string]any{"model": "m", "input": "hi", "tools": out}))
}

func TestOpenAIResponsesToolOutput(t *testing.T) {
	got := mustJSON(t, provider.OpenAIResponsesToolOutput(llmtoolkit.Result{ToolCallID: "call_1", Content: ""}))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_1","output":""}`, string(got), "an empty output is still written")
	got = mustJSON(t, provider.OpenAIResponsesToolOutput(llmtoolkit.Result{ToolCallID: "call_1", Content: "no such city", IsError: true}))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_1","output":"Error: no such city"}`, string(got))
}

func TestOpenAIResponsesResponse(t *testing.T) {
	resp, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_function_call.json"))
	require.NoError(t, err)
	assert.Equal(t, agentloop.Usage{InputTokens: 81, OutputTokens: 149, ContextTokens: 81, ReasoningTokens: 128}, resp.Usage)
	require.Len(t, resp.ToolCalls, 1)
	c := resp.ToolCalls[0]
	assert.Equal(t, "call_Vr8ltxfbeaySrWoRrsjhzSlV", c.ID, "the call ID is call_id, which the output echoes")
	assert.JSONEq(t, `{"id":"fc_6820f3855b6881918dd5ffd5d7a9c1410ac5ba57aafcbac7"}`, string(c.Provider[provider.StateOpenAIResponses]))

	resp, err = provider.OpenAIResponsesResponse(json.RawMessage(`{"status":"incomplete","incomplete_details":{"reason":"max_output_tokens"},"output":[]}`))
	require.NoError(t, err)
	assert.Equal(t, "max_output_tokens", resp.StopReason)
	assert.Nil(t, resp.Provider, "nothing to replay")

	for _, tc := range []struct{ name, payload, want string }{
		{"failed", `{"status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}`, "The model failed."},
		{"no output", `{"status":"completed"}`, `no "output"`},
		{"call without name", `[{"type":"function_call","call_id":"c","arguments":"{}"}]`, "without a name"},
		{"not JSON", `<html>`, "OpenAI Responses"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := provider.OpenAIResponsesResponse(json.RawMessage(tc.payload))
			require.ErrorIs(t, err, provider.ErrInvalidPayload)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func FuzzOpenAIResponsesResponse(f *testing.F) {
	f.Add([]byte(testdata(f, "openai_responses_function_call.json")))
	f.Add([]byte(`[{"type":"function_call","call_id":"c","name":"f","arguments":"{"}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		resp, err := provider.OpenAIResponsesResponse(data)
		if err != nil {
			return
		}
		for _, c := range resp.ToolCalls {
			if c.Name == "" || c.ID == "" || c.Arguments == nil {
				t.Fatalf("incomplete call: %+v", c)
			}
		}
		if _, err := provider.OpenAIResponsesInput([]agentloop.Message{resp.Message()}); err != nil {
			t.Fatalf("a parsed response does not replay: %v", err)
		}
	})
}
