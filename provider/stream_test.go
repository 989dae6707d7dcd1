package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// accumulator is what the four stream types have in common.
type accumulator interface {
	Add([]byte) error
	Response() (agentloop.Response, error)
}

// stream feeds a recorded event stream from testdata to acc.
func stream(t *testing.T, name string, acc accumulator) agentloop.Response {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	events := 0
	require.NoError(t, provider.ReadSSE(t.Context(), bytes.NewReader(data), func(_ string, d []byte) error {
		events++
		return acc.Add(d)
	}))
	require.Positive(t, events)
	resp, err := acc.Response()
	require.NoError(t, err)
	return resp
}

// assertSameAnswer checks that a streamed answer is the unstreamed one:
// same text, calls, stop reason and usage, and the same request when
// replayed.
func assertSameAnswer(t *testing.T, want, got agentloop.Response, replay func(agentloop.Message) any) {
	t.Helper()
	assert.Equal(t, want.Content, got.Content)
	assert.Equal(t, want.StopReason, got.StopReason)
	assert.Equal(t, want.Usage, got.Usage)
	assert.Equal(t, want.Model, got.Model)
	require.Len(t, got.ToolCalls, len(want.ToolCalls))
	for i := range want.ToolCalls {
		w, g := want.ToolCalls[i], got.ToolCalls[i]
		assert.Equal(t, w.ID, g.ID)
		assert.Equal(t, w.Name, g.Name)
		assert.Equal(t, w.Arguments, g.Arguments)
		assert.Equal(t, w.Malformed, g.Malformed)
		assert.Equal(t, len(w.Provider), len(g.Provider))
		for k := range w.Provider {
			assert.JSONEq(t, string(w.Provider[k]), string(g.Provider[k]))
		}
	}
	assert.JSONEq(t, string(mustJSON(t, replay(want.Message()))), string(mustJSON(t, replay(got.Message()))), "the replayed turn differs")
}

func TestAnthropicStream(t *testing.T) {
	want, err := provider.AnthropicResponse(testdata(t, "anthropic_response_thinking_tool_use.json"))
	require.NoError(t, err)
	got := stream(t, "anthropic_stream_thinking_tool_use.sse", &provider.AnthropicStream{})
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		am, ok := provider.AnthropicAssistantMessage(m)
		require.True(t, ok)
		return am
	})
	assert.Equal(t, agentloop.Usage{InputTokens: 412, OutputTokens: 128, ContextTokens: 412}, got.Usage)
}

// TestAnthropicStreamRedactedThinking: a redacted_thinking block streams
// as a content_block_start with its data and no delta; it is replayed
// first, unchanged, before the thinking block and its signature.
func TestAnthropicStreamRedactedThinking(t *testing.T) {
	want, err := provider.AnthropicResponse(testdata(t, "anthropic_response_redacted_thinking.json"))
	require.NoError(t, err)
	got := stream(t, "anthropic_stream_redacted_thinking.sse", &provider.AnthropicStream{})
	replay := func(m agentloop.Message) any {
		am, ok := provider.AnthropicAssistantMessage(m)
		require.True(t, ok)
		return am
	}
	assertSameAnswer(t, want, got, replay)
	assert.JSONEq(t, string(field(t, testdata(t, "anthropic_response_redacted_thinking.json"), "content")),
		string(mustJSON(t, replay(got.Message()).(provider.AnthropicMessage).Content)))
	assert.Equal(t, agentloop.Usage{InputTokens: 630, OutputTokens: 96, ContextTokens: 630}, got.Usage)
}

func TestAnthropicStreamTruncatedInput(t *testing.T) {
	var s provider.AnthropicStream
	for _, e := range []string{
		`{"type":"message_start","message":{"usage":{"input_tokens":5,"output_tokens":1}}}`,
		`{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{}}}`,
		`{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"Pa"}}`,
		`{"type":"message_delta","delta":{"stop_reason":"max_tokens"},"usage":{"output_tokens":10}}`,
	} {
		require.NoError(t, s.Add([]byte(e)))
	}
	resp, err := s.Response()
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 1)
	require.NotNil(t, resp.ToolCalls[0].Malformed, "a cut input goes back to the model")
	assert.Equal(t, `{"location": "Pa`, resp.ToolCalls[0].Malformed.Raw)
	assert.Equal(t, "max_tokens", resp.StopReason)

	var bad provider.AnthropicStream
	require.NoError(t, bad.Add([]byte(`{"type":"message_start","message":{}}`)))
	require.ErrorIs(t, bad.Add([]byte(`{"type":"content_block_delta","index":3,"delta":{"type":"text_delta","text":"x"}}`)), provider.ErrInvalidPayload)
	err = bad.Add([]byte(`{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`))
	require.ErrorIs(t, err, provider.ErrInvalidPayload)
	assert.Contains(t, err.Error(), "Overloaded")
	_, err = (&provider.AnthropicStream{}).Response()
	require.ErrorIs(t, err, provider.ErrInvalidPayload)
}

func TestOpenAIStream(t *testing.T) {
	want, err := provider.OpenAIResponse(testdata(t, "openai_response_tool_calls.json"))
	require.NoError(t, err)
	got := stream(t, "openai_chat_stream.sse", &provider.OpenAIStream{})
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		msgs, err := provider.OpenAIMessages([]agentloop.Message{m})
		require.NoError(t, err)
		return msgs
	})

	var s provider.OpenAIStream
	require.NoError(t, s.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"Hel"}}]}`)))
	require.NoError(t, s.Add([]byte(`{"choices":[{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"},{"index":1,"delta":{"content":"other choice"}}]}`)))
	resp, err := s.Response()
	require.NoError(t, err)
	assert.Equal(t, "Hello", resp.Content)
	assert.Equal(t, "stop", resp.StopReason)

	var e provider.OpenAIStream
	require.ErrorIs(t, e.Add([]byte(`{"error":{"message":"Rate limit reached"}}`)), provider.ErrInvalidPayload)
	require.NoError(t, e.Add([]byte(`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{}"}}]}}]}`)))
	_, err = e.Response()
	require.ErrorIs(t, err, provider.ErrInvalidPayload, "a call without a name")
}

func TestOpenAIResponsesStream(t *testing.T) {
	want, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_function_call.json"))
	require.NoError(t, err)
	got := stream(t, "openai_responses_stream.sse", &provider.OpenAIResponsesStream{})
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		items, err := provider.OpenAIResponsesAssistantItems(m)
		require.NoError(t, err)
		return items
	})
	assert.Contains(t, string(got.Provider[provider.StateOpenAIResponses]), "gAAAAABoIPODpWh2", "the done item's encrypted_content, not the partial one")

	// A stream cut before output_item.done: the call comes from its deltas.
	var s provider.OpenAIResponsesStream
	for _, e := range []string{
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}}`,
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"{\"location\":"}`,
		`{"type":"response.function_call_arguments.delta","output_index":0,"delta":"\"Oslo\"}"}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"message","id":"msg_1","role":"assistant","content":[]}}`,
		`{"type":"response.output_text.delta","output_index":1,"delta":"Checking"}`,
	} {
		require.NoError(t, s.Add([]byte(e)))
	}
	resp, err := s.Response()
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 1)
	assert.Equal(t, map[string]any{"location": "Oslo"}, resp.ToolCalls[0].Arguments)
	assert.Equal(t, "Checking", resp.Content)

	var f provider.OpenAIResponsesStream
	err = f.Add([]byte(`{"type":"response.failed","response":{"status":"failed","error":{"code":"server_error","message":"boom"}}}`))
	require.ErrorIs(t, err, provider.ErrInvalidPayload)
	assert.Contains(t, err.Error(), "boom")
}

func TestGeminiStream(t *testing.T) {
	want, err := provider.GeminiResponse(testdata(t, "gemini3_response_call_signature.json"))
	require.NoError(t, err)
	got := stream(t, "gemini3_stream_call_signature.sse", &provider.GeminiStream{})
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		c, ok := provider.GeminiModelContent(m)
		require.True(t, ok)
		return c
	})

	// The final signature comes on an empty text part: it stays there.
	got = stream(t, "gemini3_stream_text_signature.sse", &provider.GeminiStream{})
	assert.Equal(t, "It is 18°C and cloudy in Paris, and 22°C in Tokyo where it is 9 pm.", got.Content)
	c, ok := provider.GeminiModelContent(got.Message())
	require.True(t, ok)
	assert.JSONEq(t, `[{"text":"It is 18°C and cloudy in Paris, and 22°C in Tokyo where it is 9 pm."},{"text":"","thoughtSignature":"CiQBjz1rZmluYWwtdGV4dC1zaWduYXR1cmUtdGhyZWU="}]`,
		string(mustJSON(t, c.Parts)))
	assert.Equal(t, agentloop.Usage{InputTokens: 220, OutputTokens: 60, ContextTokens: 220, ReasoningTokens: 36}, got.Usage)

	var s provider.GeminiStream
	require.ErrorIs(t, s.Add([]byte(`{"promptFeedback":{"blockReason":"SAFETY"}}`)), provider.ErrInvalidPayload)
	require.ErrorIs(t, s.Add([]byte(`{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}`)), provider.ErrInvalidPayload)
	_, err = s.Response()
	require.ErrorIs(t, err, provider.ErrInvalidPayload)
}

func TestReadSSE(t *testing.T) {
	in := ": comment\nevent: a\ndata: {\"x\":\ndata: 1}\n\nid: 7\ndata: second\r\n\n\nevent: empty\n\ndata: last"
	var got []string
	require.NoError(t, provider.ReadSSE(t.Context(), strings.NewReader(strings.ReplaceAll(in, "\r", "")), func(ev string, data []byte) error {
		got = append(got, ev+"|"+string(data))
		return nil
	}))
	assert.Equal(t, []string{"a|{\"x\":\n1}", "|second", "|last"}, got)

	stop := errors.New("stop")
	err := provider.ReadSSE(t.Context(), strings.NewReader("data: a\n\ndata: b\n\n"), func(string, []byte) error { return stop })
	assert.ErrorIs(t, err, stop)

	big := "data: " + strings.Repeat("x", provider.MaxSSEEventBytes/2) + "\n"
	err = provider.ReadSSE(t.Context(), strings.NewReader(big+big+big+"\n"), func(string, []byte) error { return nil })
	assert.ErrorIs(t, err, provider.ErrStreamTooLarge)

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err = provider.ReadSSE(ctx, strings.NewReader("data: a\n\n"), func(string, []byte) error { return nil })
	assert.ErrorIs(t, err, context.Canceled)
}

func FuzzStreams(f *testing.F) {
	for _, name := range []string{"anthropic_stream_thinking_tool_use.sse", "openai_chat_stream.sse", "openai_responses_stream.sse", "gemini3_stream_call_signature.sse"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		require.NoError(f, err)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, acc := range []accumulator{&provider.AnthropicStream{}, &provider.OpenAIStream{}, &provider.OpenAIResponsesStream{}, &provider.GeminiStream{}} {
			_ = provider.ReadSSE(context.Background(), bytes.NewReader(data), func(_ string, d []byte) error {
				_ = acc.Add(d) // keep going past bad events
				return nil
			})
			resp, err := acc.Response()
			if err != nil {
				continue
			}
			for _, c := range resp.ToolCalls {
				if c.Name == "" || c.Arguments == nil {
					t.Fatalf("%T: incomplete call %+v", acc, c)
				}
			}
			if _, err := json.Marshal(resp); err != nil {
				t.Fatalf("%T: the response does not encode: %v", acc, err)
			}
		}
	})
}
