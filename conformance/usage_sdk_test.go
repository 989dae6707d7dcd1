//go:build peers

package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestUsageMatchesSDKs: the cache and reasoning counts our parsers read
// are the ones the official SDKs' usage types read from the same body (a
// misspelt field name reads 0 on one side only), and the model named.
func TestUsageMatchesSDKs(t *testing.T) {
	t.Run("openai chat", func(t *testing.T) {
		body := []byte(`{"id":"c1","object":"chat.completion","created":1,"model":"gpt-x","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],
			"usage":{"prompt_tokens":900,"completion_tokens":300,"total_tokens":1200,"prompt_tokens_details":{"cached_tokens":800},"completion_tokens_details":{"reasoning_tokens":256}}}`)
		var sdk openai.ChatCompletion
		require.NoError(t, json.Unmarshal(body, &sdk))
		resp, err := provider.OpenAIResponse(body)
		require.NoError(t, err)
		assert.Equal(t, agentloop.Usage{InputTokens: int(sdk.Usage.PromptTokens), OutputTokens: int(sdk.Usage.CompletionTokens), ContextTokens: int(sdk.Usage.PromptTokens),
			CacheReadTokens: int(sdk.Usage.PromptTokensDetails.CachedTokens), ReasoningTokens: int(sdk.Usage.CompletionTokensDetails.ReasoningTokens)}, resp.Usage)
		assert.Equal(t, sdk.Model, resp.Model)
		assert.Equal(t, 800, resp.Usage.CacheReadTokens)
		assert.Equal(t, 256, resp.Usage.ReasoningTokens)
	})
	t.Run("openai responses", func(t *testing.T) {
		body := []byte(`{"id":"r1","object":"response","model":"o-x","status":"completed","output":[{"type":"message","id":"m1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"ok","annotations":[]}]}],
			"usage":{"input_tokens":700,"output_tokens":400,"total_tokens":1100,"input_tokens_details":{"cached_tokens":600},"output_tokens_details":{"reasoning_tokens":384}}}`)
		var sdk responses.Response
		require.NoError(t, json.Unmarshal(body, &sdk))
		resp, err := provider.OpenAIResponsesResponse(body)
		require.NoError(t, err)
		assert.Equal(t, agentloop.Usage{InputTokens: int(sdk.Usage.InputTokens), OutputTokens: int(sdk.Usage.OutputTokens), ContextTokens: int(sdk.Usage.InputTokens),
			CacheReadTokens: int(sdk.Usage.InputTokensDetails.CachedTokens), ReasoningTokens: int(sdk.Usage.OutputTokensDetails.ReasoningTokens)}, resp.Usage)
		assert.Equal(t, string(sdk.Model), resp.Model)
		assert.Equal(t, 600, resp.Usage.CacheReadTokens)
		assert.Equal(t, 384, resp.Usage.ReasoningTokens)
	})
	t.Run("anthropic", func(t *testing.T) {
		body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-x","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
			"usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":90000,"output_tokens":5}}`)
		var sdk anthropic.Message
		require.NoError(t, json.Unmarshal(body, &sdk))
		resp, err := provider.AnthropicResponse(body)
		require.NoError(t, err)
		assert.Equal(t, int(sdk.Usage.CacheReadInputTokens), resp.Usage.CacheReadTokens)
		assert.Equal(t, int(sdk.Usage.CacheCreationInputTokens), resp.Usage.CacheWriteTokens)
		assert.Equal(t, string(sdk.Model), resp.Model)
		assert.Equal(t, 90000, resp.Usage.CacheReadTokens)
		assert.Equal(t, 2000, resp.Usage.CacheWriteTokens)
	})
	t.Run("gemini", func(t *testing.T) {
		sdk := &genai.GenerateContentResponse{
			ModelVersion: "gemini-x",
			Candidates:   []*genai.Candidate{{Content: genai.NewContentFromText("ok", genai.RoleModel), FinishReason: genai.FinishReasonStop}},
			UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 500, CachedContentTokenCount: 400,
				CandidatesTokenCount: 2, ThoughtsTokenCount: 30},
		}
		resp, err := provider.GeminiResponse(mustJSON(t, sdk))
		require.NoError(t, err)
		assert.Equal(t, agentloop.Usage{InputTokens: 500, OutputTokens: 32, ContextTokens: 500, CacheReadTokens: 400, ReasoningTokens: 30}, resp.Usage)
		assert.Equal(t, "gemini-x", resp.Model)
	})
}
