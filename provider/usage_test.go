package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func usd(v float64) *float64 { return &v }

// TestUsageContextTokens: each format's parser reports the whole prompt's
// size in Usage.ContextTokens, the cache reads and writes, the reasoning
// tokens and the model that answered. Anthropic's input_tokens leaves the
// cached parts out (cache_creation_input_tokens, cache_read_input_tokens):
// a loop that counted its history with input_tokens alone would think a
// cached 90k-token prompt holds 12 tokens.
func TestUsageContextTokens(t *testing.T) {
	tests := map[string]struct {
		parse func(json.RawMessage) (agentloop.Response, error)
		body  string
		want  agentloop.Usage
		model string
	}{
		"anthropic with cache": {provider.AnthropicResponse,
			`{"model":"claude-x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":90000,"output_tokens":5}}`,
			agentloop.Usage{InputTokens: 12, OutputTokens: 5, ContextTokens: 92012, CacheReadTokens: 90000, CacheWriteTokens: 2000}, "claude-x"},
		"anthropic without cache": {provider.AnthropicResponse,
			`{"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":12,"output_tokens":5}}`,
			agentloop.Usage{InputTokens: 12, OutputTokens: 5, ContextTokens: 12}, ""},
		"openai chat (prompt_tokens counts cached tokens)": {provider.OpenAIResponse,
			`{"model":"gpt-x","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":900,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":800},"completion_tokens_details":{"reasoning_tokens":256}}}`,
			agentloop.Usage{InputTokens: 900, OutputTokens: 300, ContextTokens: 900, CacheReadTokens: 800, ReasoningTokens: 256}, "gpt-x"},
		"openai chat with a reported cost (OpenRouter)": {provider.OpenAIResponse,
			`{"model":"vendor/m","choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":10,"completion_tokens":2,"cost":0.00125}}`,
			agentloop.Usage{InputTokens: 10, OutputTokens: 2, ContextTokens: 10, CostUSD: usd(0.00125)}, "vendor/m"},
		"openai responses": {provider.OpenAIResponsesResponse,
			`{"model":"o-x","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":700,"output_tokens":400,"input_tokens_details":{"cached_tokens":600},"output_tokens_details":{"reasoning_tokens":384}}}`,
			agentloop.Usage{InputTokens: 700, OutputTokens: 400, ContextTokens: 700, CacheReadTokens: 600, ReasoningTokens: 384}, "o-x"},
		"gemini": {provider.GeminiResponse,
			`{"modelVersion":"gemini-x","candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":500,"cachedContentTokenCount":400,"candidatesTokenCount":2,"thoughtsTokenCount":30}}`,
			agentloop.Usage{InputTokens: 500, OutputTokens: 32, ContextTokens: 500, CacheReadTokens: 400, ReasoningTokens: 30}, "gemini-x"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := tt.parse(json.RawMessage(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Usage)
			assert.Equal(t, tt.model, resp.Model)
		})
	}
}

// TestStreamUsage: every stream reader reports the same counts and model
// as its format's parser.
func TestStreamUsage(t *testing.T) {
	tests := map[string]struct {
		acc    accumulator
		events []string
		want   agentloop.Usage
		model  string
	}{
		"openai chat": {&provider.OpenAIStream{}, []string{
			`{"model":"gpt-x","choices":[{"index":0,"delta":{"role":"assistant","content":"ok"}}]}`,
			`{"model":"gpt-x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`,
			`{"model":"gpt-x","choices":[],"usage":{"prompt_tokens":900,"completion_tokens":300,"prompt_tokens_details":{"cached_tokens":800},"completion_tokens_details":{"reasoning_tokens":256},"cost":0.5}}`,
			`[DONE]`,
		}, agentloop.Usage{InputTokens: 900, OutputTokens: 300, ContextTokens: 900, CacheReadTokens: 800, ReasoningTokens: 256, CostUSD: usd(0.5)}, "gpt-x"},
		"openai responses": {&provider.OpenAIResponsesStream{}, []string{
			`{"type":"response.created","response":{"model":"o-x","status":"in_progress","output":[]}}`,
			`{"type":"response.output_item.added","output_index":0,"item":{"type":"message","id":"m1","role":"assistant","content":[]}}`,
			`{"type":"response.output_text.delta","output_index":0,"delta":"ok"}`,
			`{"type":"response.completed","response":{"model":"o-x","status":"completed","output":[],"usage":{"input_tokens":700,"output_tokens":400,"input_tokens_details":{"cached_tokens":600},"output_tokens_details":{"reasoning_tokens":384}}}}`,
		}, agentloop.Usage{InputTokens: 700, OutputTokens: 400, ContextTokens: 700, CacheReadTokens: 600, ReasoningTokens: 384}, "o-x"},
		"anthropic": {&provider.AnthropicStream{}, []string{
			`{"type":"message_start","message":{"model":"claude-x","usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":90000,"output_tokens":1}}}`,
			`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
			`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
			`{"type":"content_block_stop","index":0}`,
			`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}`,
			`{"type":"message_stop"}`,
		}, agentloop.Usage{InputTokens: 12, OutputTokens: 5, ContextTokens: 92012, CacheReadTokens: 90000, CacheWriteTokens: 2000}, "claude-x"},
		"gemini": {&provider.GeminiStream{}, []string{
			`{"modelVersion":"gemini-x","candidates":[{"content":{"role":"model","parts":[{"text":"o"}]}}]}`,
			`{"modelVersion":"gemini-x","candidates":[{"content":{"role":"model","parts":[{"text":"k"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":500,"cachedContentTokenCount":400,"candidatesTokenCount":2,"thoughtsTokenCount":30}}`,
		}, agentloop.Usage{InputTokens: 500, OutputTokens: 32, ContextTokens: 500, CacheReadTokens: 400, ReasoningTokens: 30}, "gemini-x"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			for _, e := range tt.events {
				require.NoError(t, tt.acc.Add([]byte(e)))
			}
			resp, err := tt.acc.Response()
			require.NoError(t, err)
			assert.Equal(t, "ok", resp.Content)
			assert.Equal(t, tt.want, resp.Usage)
			assert.Equal(t, tt.model, resp.Model)
		})
	}
}

// TestAnthropicStreamContextTokens: the cache counts of message_start
// and, when it has them, message_delta's final counts.
func TestAnthropicStreamContextTokens(t *testing.T) {
	start := `{"type":"message_start","message":{"usage":{"input_tokens":10,"cache_creation_input_tokens":100,"cache_read_input_tokens":5000,"output_tokens":1}}}`
	for name, tt := range map[string]struct {
		delta string
		want  agentloop.Usage
	}{
		"message_start's counts": {`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":7}}`,
			agentloop.Usage{InputTokens: 10, OutputTokens: 7, ContextTokens: 5110, CacheReadTokens: 5000, CacheWriteTokens: 100}},
		"message_delta's final counts": {`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":11,"cache_creation_input_tokens":0,"cache_read_input_tokens":6000,"output_tokens":7}}`,
			agentloop.Usage{InputTokens: 11, OutputTokens: 7, ContextTokens: 6011, CacheReadTokens: 6000}},
	} {
		t.Run(name, func(t *testing.T) {
			var s provider.AnthropicStream
			for _, ev := range []string{start,
				`{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ok"}}`,
				`{"type":"content_block_stop","index":0}`, tt.delta, `{"type":"message_stop"}`} {
				require.NoError(t, s.Add([]byte(ev)))
			}
			resp, err := s.Response()
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Usage)
		})
	}
}
