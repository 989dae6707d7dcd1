package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// wire is one provider's request builder and response parser, as a host's
// SendFunc uses them.
type wire struct {
	name string
	// body is the request body a host gives json.Marshal.
	body  func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) any
	parse func(json.RawMessage) (agentloop.Response, error)
	// sdk decodes a request into the official SDK's request type and
	// checks that nothing was lost (see sdk_test.go).
	sdk func(t *testing.T, body []byte)
	// history is the request's member that holds the conversation.
	history string
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// request is the request body as provider.MarshalRequest writes it, which
// must be byte for byte what json.Marshal writes (and every golden file
// of these tests was written with json.Marshal).
func (w wire) request(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) []byte {
	t.Helper()
	body := w.body(t, history, tools)
	got, err := provider.MarshalRequest(body)
	require.NoError(t, err)
	require.Equal(t, string(mustJSON(t, body)), string(got), "MarshalRequest and json.Marshal differ")
	var buf bytes.Buffer
	require.NoError(t, provider.WriteRequest(&buf, body))
	require.Equal(t, string(got), buf.String(), "WriteRequest and MarshalRequest differ")
	return got
}

var wires = map[string]wire{
	"anthropic": {
		name: "anthropic",
		body: func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) any {
			system, msgs, err := provider.AnthropicMessages(history)
			require.NoError(t, err)
			body := map[string]any{
				"model": "claude-sonnet-4-5", "max_tokens": 16000, "messages": msgs,
				"tools": provider.AnthropicTools(tools), "thinking": map[string]any{"type": "enabled", "budget_tokens": 10000},
			}
			if system != "" {
				body["system"] = system
			}
			return body
		},
		parse:   provider.AnthropicResponse,
		sdk:     checkAnthropicSDK,
		history: "messages",
	},
	"gemini": {
		name: "gemini",
		body: func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) any {
			system, contents, err := provider.GeminiContents(history)
			require.NoError(t, err)
			body := map[string]any{"contents": contents, "tools": provider.GeminiTools(tools)}
			if system != nil {
				body["systemInstruction"] = system
			}
			return body
		},
		parse:   provider.GeminiResponse,
		sdk:     checkGeminiSDK,
		history: "contents",
	},
	"openai-responses": {
		name: "openai-responses",
		body: func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) any {
			input, err := provider.OpenAIResponsesInput(history)
			require.NoError(t, err)
			return map[string]any{
				"model": "o4-mini", "input": input, "tools": provider.OpenAIResponsesTools(tools),
				"store": false, "include": []string{"reasoning.encrypted_content"},
			}
		},
		parse:   provider.OpenAIResponsesResponse,
		sdk:     checkOpenAIResponsesSDK,
		history: "input",
	},
	"openai-chat": {
		name: "openai-chat",
		body: func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) any {
			msgs, err := provider.OpenAIMessages(history)
			require.NoError(t, err)
			return map[string]any{"model": "gpt-4o-mini", "messages": msgs, "tools": provider.OpenAITools(tools)}
		},
		parse:   provider.OpenAIResponse,
		sdk:     checkOpenAIChatSDK,
		history: "messages",
	},
}

// fakeAPI is a SendFunc built on a wire: it records every request body and
// answers with the given response bodies, in order.
type fakeAPI struct {
	t         *testing.T
	w         wire
	responses []json.RawMessage
	mu        sync.Mutex
	requests  [][]byte
}

func (f *fakeAPI) send(_ context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	body := f.w.request(f.t, history, tools)
	f.w.sdk(f.t, body)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, body)
	n := len(f.requests)
	if n > len(f.responses) {
		f.t.Errorf("%s: request %d but only %d responses scripted", f.w.name, n, len(f.responses))
		return agentloop.Response{}, llmtoolkittest.ErrScriptExhausted
	}
	return f.w.parse(f.responses[n-1])
}

func weatherTools() *llmtoolkittest.Fake {
	f := llmtoolkittest.NewFake(nil)
	f.Add(llmtoolkit.MustTool("get_weather", "Get the current weather in a city.", map[string]any{
		"type": "object", "properties": map[string]any{"location": map[string]any{"type": "string"}}, "required": []any{"location"},
	}), func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return "18°C, cloudy in " + c.Arguments["location"].(string), nil
	})
	f.Add(llmtoolkit.MustTool("get_time", "Get the time in an IANA time zone.", map[string]any{
		"type": "object", "properties": map[string]any{"timezone": map[string]any{"type": "string"}}, "required": []any{"timezone"},
	}), func(_ context.Context, c llmtoolkit.Call) (string, error) { return "21:00", nil })
	return f
}

// converse runs a whole conversation (user → call → result → calls →
// results → answer) through agentloop with the wire's functions and
// returns the requests sent and the final response.
func converse(t *testing.T, w wire, responses ...string) ([][]byte, agentloop.Response, []agentloop.Message) {
	t.Helper()
	api := &fakeAPI{t: t, w: w}
	for _, name := range responses {
		api.responses = append(api.responses, testdata(t, name))
	}
	resp, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("Weather in Paris, and the time in Tokyo?")},
		api.send, agentloop.Options{Resolver: weatherTools(), MaxParallel: 1})
	require.NoError(t, err)
	require.Len(t, api.requests, len(responses))
	checkRequests(t, w, api.requests)
	return api.requests, resp, history
}

// checkRequests checks what every request of a conversation has in
// common: each offers both tools; the first holds the user's question
// alone; each later one holds the previous one's history unchanged (a
// replayed turn is byte for byte what it was) followed by the new turns.
func checkRequests(t *testing.T, w wire, reqs [][]byte) {
	t.Helper()
	var prev []json.RawMessage
	for i, body := range reqs {
		tools := string(field(t, body, "tools"))
		assert.Contains(t, tools, `"get_weather"`, "request %d offers the tools", i)
		assert.Contains(t, tools, `"get_time"`, "request %d offers the tools", i)
		var items []json.RawMessage
		require.NoError(t, json.Unmarshal(field(t, body, w.history), &items), "request %d", i)
		if i == 0 {
			require.Len(t, items, 1, "the first request holds the question alone: %s", body)
			assert.Contains(t, string(items[0]), "Weather in Paris, and the time in Tokyo?")
		} else {
			require.Greater(t, len(items), len(prev), "request %d adds turns", i)
			for j := range prev {
				assert.JSONEq(t, string(prev[j]), string(items[j]), "request %d changes item %d of the history", i, j)
			}
		}
		prev = items
	}
}

// field decodes the JSON at a dotted path of body ("messages.1.content").
func field(t *testing.T, body []byte, path string) json.RawMessage {
	t.Helper()
	cur := json.RawMessage(body)
	for _, key := range strings.Split(path, ".") {
		if isIndex(key) {
			var list []json.RawMessage
			require.NoError(t, json.Unmarshal(cur, &list), "at %q of %s", key, path)
			i := atoi(key)
			require.Less(t, i, len(list), "index %d of %s in %s", i, path, body)
			cur = list[i]
			continue
		}
		var obj map[string]json.RawMessage
		require.NoError(t, json.Unmarshal(cur, &obj), "at %q of %s", key, path)
		v, ok := obj[key]
		require.True(t, ok, "no %q in %s", key, cur)
		cur = v
	}
	return cur
}

func isIndex(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestRoundTripAnthropicThinking(t *testing.T) {
	reqs, resp, _ := converse(t, wires["anthropic"],
		"anthropic_response_thinking_tool_use.json", "anthropic_response_redacted_thinking.json", "anthropic_response_thinking_text.json")
	first := field(t, testdata(t, "anthropic_response_thinking_tool_use.json"), "content")
	second := field(t, testdata(t, "anthropic_response_redacted_thinking.json"), "content")

	// Request 2 replays the first answer's blocks unchanged and in order:
	// thinking (with its signature), text, tool_use; then the result.
	assert.JSONEq(t, string(first), string(field(t, reqs[1], "messages.1.content")))
	assert.Equal(t, "assistant", jsonString(t, field(t, reqs[1], "messages.1.role")))
	assert.JSONEq(t, `[{"type":"tool_result","tool_use_id":"toolu_01NRLabsLyVHZPKxbKvkfSMn","content":"18°C, cloudy in Paris"}]`,
		string(field(t, reqs[1], "messages.2.content")))
	// Request 3 replays both turns: the redacted_thinking block keeps its data.
	assert.JSONEq(t, string(first), string(field(t, reqs[2], "messages.1.content")))
	assert.JSONEq(t, string(second), string(field(t, reqs[2], "messages.3.content")))
	assert.Equal(t, "It is 18°C and cloudy in Paris, and 9 pm in Tokyo.", resp.Content)
	assert.NotContains(t, resp.Content, "summarise", "thinking is not text")
}

func TestRoundTripGeminiThoughtSignatures(t *testing.T) {
	reqs, resp, history := converse(t, wires["gemini"],
		"gemini3_response_call_signature.json", "gemini3_response_parallel_calls.json", "gemini3_response_text_signature.json")
	first := field(t, testdata(t, "gemini3_response_call_signature.json"), "candidates.0.content.parts")
	second := field(t, testdata(t, "gemini3_response_parallel_calls.json"), "candidates.0.content.parts")

	// The call ID is Gemini's id, echoed in the functionResponse.
	assert.Equal(t, "9xk2mq7b", history[1].ToolCalls[0].ID)
	assert.JSONEq(t, string(first), string(field(t, reqs[1], "contents.1.parts")), "the model turn goes back unchanged, signature on its part")
	assert.JSONEq(t, `[{"functionResponse":{"id":"9xk2mq7b","name":"get_weather","response":{"output":"18°C, cloudy in Paris"}}}]`,
		string(field(t, reqs[1], "contents.2.parts")))
	assert.JSONEq(t, string(first), string(field(t, reqs[2], "contents.1.parts")))
	assert.JSONEq(t, string(second), string(field(t, reqs[2], "contents.3.parts")), "parallel calls: the signature stays on the first")
	assert.Equal(t, "c0m8ws2e", jsonString(t, field(t, reqs[2], "contents.4.parts.1.functionResponse.id")))
	assert.Equal(t, "It is 18°C and cloudy in Paris, and 22°C in Tokyo where it is 9 pm.", resp.Content)
	assert.Equal(t, agentloop.Usage{InputTokens: 220, OutputTokens: 60, ContextTokens: 220, ReasoningTokens: 36}, resp.Usage, "thought tokens are output")
	require.NotNil(t, resp.Provider, "a text signature is kept too")
}

func TestRoundTripOpenAIResponsesReasoning(t *testing.T) {
	reqs, resp, _ := converse(t, wires["openai-responses"],
		"openai_responses_function_call.json", "openai_responses_parallel_calls.json", "openai_responses_text.json")
	first := field(t, testdata(t, "openai_responses_function_call.json"), "output")
	second := field(t, testdata(t, "openai_responses_parallel_calls.json"), "output")

	var firstItems, secondItems []json.RawMessage
	require.NoError(t, json.Unmarshal(first, &firstItems))
	require.NoError(t, json.Unmarshal(second, &secondItems))
	// input: user, reasoning, function_call, output, reasoning, call, call, output, output
	assert.JSONEq(t, `{"type":"message","role":"user","content":"Weather in Paris, and the time in Tokyo?"}`, string(field(t, reqs[1], "input.0")))
	for i, item := range firstItems {
		assert.JSONEq(t, string(item), string(field(t, reqs[1], "input."+itoa(1+i))), "item %d", i)
		assert.JSONEq(t, string(item), string(field(t, reqs[2], "input."+itoa(1+i))), "item %d", i)
	}
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_Vr8ltxfbeaySrWoRrsjhzSlV","output":"18°C, cloudy in Paris"}`, string(field(t, reqs[1], "input.3")))
	for i, item := range secondItems {
		assert.JSONEq(t, string(item), string(field(t, reqs[2], "input."+itoa(4+i))), "item %d", i)
	}
	assert.Equal(t, "call_XE6ZnZzGq2rQ9m0rPPUvE3kX", jsonString(t, field(t, reqs[2], "input.7.call_id")))
	assert.Equal(t, "call_a1B9cD3eF5gH7iJ9kL1mN3oP", jsonString(t, field(t, reqs[2], "input.8.call_id")))
	assert.Contains(t, string(field(t, reqs[2], "input.1.encrypted_content")), "gAAAAABoIPODpWh2")
	assert.Equal(t, "It is 18°C and cloudy in Paris, and 9 pm in Tokyo.", resp.Content)
	assert.Equal(t, "completed", resp.StopReason)
}

func TestRoundTripOpenAIChat(t *testing.T) {
	reqs, resp, _ := converse(t, wires["openai-chat"],
		"openai_response_call_weather.json", "openai_response_parallel_calls.json", "openai_response_answer.json")

	// messages: user, assistant (text and call), tool, assistant (two calls), tool, tool
	assert.JSONEq(t, `{"role":"assistant","content":"Let me check the weather first.","tool_calls":[
		{"id":"call_9Yq2dQF5kTnB1sW3eR7uZx0C","type":"function","function":{"name":"get_weather","arguments":"{\"location\":\"Paris\"}"}}]}`,
		string(field(t, reqs[1], "messages.1")))
	assert.JSONEq(t, `{"role":"tool","tool_call_id":"call_9Yq2dQF5kTnB1sW3eR7uZx0C","content":"18°C, cloudy in Paris"}`, string(field(t, reqs[1], "messages.2")))
	assert.JSONEq(t, string(field(t, testdata(t, "openai_response_parallel_calls.json"), "choices.0.message.tool_calls")),
		string(field(t, reqs[2], "messages.3.tool_calls")), "the calls go back as the model sent them")
	assert.JSONEq(t, `{"role":"tool","tool_call_id":"call_Hk4mP7vQ2wXs9LdF1aZc3RtE","content":"21:00"}`, string(field(t, reqs[2], "messages.4")))
	assert.JSONEq(t, `{"role":"tool","tool_call_id":"call_Ur6nB8yJ0pVc5GiK2oMe4WqS","content":"18°C, cloudy in Tokyo"}`, string(field(t, reqs[2], "messages.5")))
	assert.Equal(t, "It is 18°C and cloudy in Paris, and 9 pm in Tokyo.", resp.Content)
	assert.Equal(t, "stop", resp.StopReason)
	assert.Equal(t, agentloop.Usage{InputTokens: 243, OutputTokens: 19, ContextTokens: 243}, resp.Usage)
}

// TestGeminiTextSignatureReplayed: a final answer's text part carries a
// thought signature; when the conversation goes on, the next request sends
// it back on that part.
func TestGeminiTextSignatureReplayed(t *testing.T) {
	answer := testdata(t, "gemini3_response_text_signature.json")
	resp, err := provider.GeminiResponse(answer)
	require.NoError(t, err)
	history := []agentloop.Message{agentloop.UserMessage("Weather in Paris, and the time in Tokyo?"), resp.Message(), agentloop.UserMessage("Thanks. And tomorrow?")}
	body := wires["gemini"].request(t, history, nil)
	checkGeminiSDK(t, body)
	assert.JSONEq(t, string(field(t, answer, "candidates.0.content.parts")), string(field(t, body, "contents.1.parts")))
	assert.Equal(t, "CiQBjz1rZmluYWwtdGV4dC1zaWduYXR1cmUtdGhyZWU=", jsonString(t, field(t, body, "contents.1.parts.0.thoughtSignature")))
	assert.Equal(t, "user", jsonString(t, field(t, body, "contents.2.role")))
}

func itoa(i int) string {
	data, _ := json.Marshal(i)
	return string(data)
}

func jsonString(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	require.NoError(t, json.Unmarshal(raw, &s), "%s", raw)
	return s
}

// TestProviderStateDoesNotLeak converts a conversation that carries every
// provider's state with each converter: none writes another's state.
func TestProviderStateDoesNotLeak(t *testing.T) {
	var history []agentloop.Message
	for _, c := range []struct {
		parse func(json.RawMessage) (agentloop.Response, error)
		file  string
	}{
		{provider.AnthropicResponse, "anthropic_response_thinking_tool_use.json"},
		{provider.GeminiResponse, "gemini3_response_call_signature.json"},
		{provider.OpenAIResponsesResponse, "openai_responses_function_call.json"},
	} {
		resp, err := c.parse(testdata(t, c.file))
		require.NoError(t, err)
		require.NotEmpty(t, resp.Provider, c.file)
		history = append(history, resp.Message())
		for _, call := range resp.ToolCalls {
			history = append(history, agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: "ok"}))
		}
	}
	foreign := map[string][]string{
		"anthropic":        {"thoughtSignature", "CiQBjz1r", "encrypted_content", "gAAAA"},
		"gemini":           {"EuYBCkQY", "signature\"", "encrypted_content", "gAAAA", "\"thinking\""},
		"openai-responses": {"thoughtSignature", "CiQBjz1r", "EuYBCkQY", "\"thinking\""},
		"openai-chat":      {"thoughtSignature", "CiQBjz1r", "EuYBCkQY", "\"thinking\"", "encrypted_content", "gAAAA"},
	}
	own := map[string]string{"anthropic": "EuYBCkQY", "gemini": "CiQBjz1r", "openai-responses": "BoIPODpWh2yJ8n"}
	for name, w := range wires {
		body := string(w.request(t, history, nil))
		for _, s := range foreign[name] {
			assert.NotContains(t, body, s, "%s request carries another provider's state", name)
		}
		if o, ok := own[name]; ok {
			assert.Contains(t, body, o, "%s request replays its own state", name)
		}
	}
}
