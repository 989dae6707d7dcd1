package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestUsageContextTokens: each format's parser reports the whole prompt's
// size in Usage.ContextTokens. Anthropic's input_tokens leaves the cached
// parts out (cache_creation_input_tokens, cache_read_input_tokens): a
// loop that counted its history with input_tokens alone would think a
// cached 90k-token prompt holds 12 tokens.
func TestUsageContextTokens(t *testing.T) {
	tests := map[string]struct {
		parse func(json.RawMessage) (agentloop.Response, error)
		body  string
		want  agentloop.Usage
	}{
		"anthropic with cache": {provider.AnthropicResponse,
			`{"content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":90000,"output_tokens":5}}`,
			agentloop.Usage{InputTokens: 12, OutputTokens: 5, ContextTokens: 92012}},
		"anthropic without cache": {provider.AnthropicResponse,
			`{"content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":12,"output_tokens":5}}`,
			agentloop.Usage{InputTokens: 12, OutputTokens: 5, ContextTokens: 12}},
		"openai chat (prompt_tokens counts cached tokens)": {provider.OpenAIResponse,
			`{"choices":[{"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":900,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":800}}}`,
			agentloop.Usage{InputTokens: 900, OutputTokens: 3, ContextTokens: 900}},
		"openai responses": {provider.OpenAIResponsesResponse,
			`{"output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}]}],"usage":{"input_tokens":700,"output_tokens":4,"input_tokens_details":{"cached_tokens":600}}}`,
			agentloop.Usage{InputTokens: 700, OutputTokens: 4, ContextTokens: 700}},
		"gemini": {provider.GeminiResponse,
			`{"candidates":[{"content":{"role":"model","parts":[{"text":"ok"}]},"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":500,"cachedContentTokenCount":400,"candidatesTokenCount":2}}`,
			agentloop.Usage{InputTokens: 500, OutputTokens: 2, ContextTokens: 500}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			resp, err := tt.parse(json.RawMessage(tt.body))
			require.NoError(t, err)
			assert.Equal(t, tt.want, resp.Usage)
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
			agentloop.Usage{InputTokens: 10, OutputTokens: 7, ContextTokens: 5110}},
		"message_delta's final counts": {`{"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"input_tokens":11,"cache_creation_input_tokens":0,"cache_read_input_tokens":6000,"output_tokens":7}}`,
			agentloop.Usage{InputTokens: 11, OutputTokens: 7, ContextTokens: 6011}},
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
