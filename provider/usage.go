package provider

import "github.com/llmtoolkit/llmtoolkit/agentloop"

// The usage objects of each format, with every count agentloop.Usage
// keeps; their field names are checked against the official SDKs' types
// in the conformance module.

// openAIChatUsage is a chat completion's usage. prompt_tokens counts the
// cached tokens, completion_tokens the reasoning tokens. cost is
// OpenRouter's (in US dollars), absent from OpenAI's own answers.
type openAIChatUsage struct {
	PromptTokens        int `json:"prompt_tokens"`
	CompletionTokens    int `json:"completion_tokens"`
	PromptTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
	Cost *float64 `json:"cost"`
}

func (u openAIChatUsage) usage() agentloop.Usage {
	out := agentloop.Usage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, ContextTokens: u.PromptTokens, CostUSD: u.Cost}
	if d := u.PromptTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.CompletionTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// openAIResponsesUsage is a Responses API usage object: input_tokens
// counts the cached tokens, output_tokens the reasoning tokens.
type openAIResponsesUsage struct {
	InputTokens        int `json:"input_tokens"`
	OutputTokens       int `json:"output_tokens"`
	InputTokensDetails *struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokensDetails *struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	Cost *float64 `json:"cost"`
}

func (u openAIResponsesUsage) usage() agentloop.Usage {
	out := agentloop.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, ContextTokens: u.InputTokens, CostUSD: u.Cost}
	if d := u.InputTokensDetails; d != nil {
		out.CacheReadTokens = d.CachedTokens
	}
	if d := u.OutputTokensDetails; d != nil {
		out.ReasoningTokens = d.ReasoningTokens
	}
	return out
}

// anthropicUsage is a Messages usage object. input_tokens leaves out the
// prompt's cached parts, which the two cache counts hold.
type anthropicUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// usage returns u as an agentloop.Usage: ContextTokens counts the whole
// prompt, cached parts included.
func (u anthropicUsage) usage() agentloop.Usage {
	return agentloop.Usage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens,
		ContextTokens:   u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens,
		CacheReadTokens: u.CacheReadInputTokens, CacheWriteTokens: u.CacheCreationInputTokens}
}

// geminiUsage is a generateContent usageMetadata: promptTokenCount counts
// the cached content, candidatesTokenCount leaves the thoughts out.
type geminiUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount"`
}

// usage returns u as an agentloop.Usage, thoughts counted as output.
func (u geminiUsage) usage() agentloop.Usage {
	return agentloop.Usage{InputTokens: u.PromptTokenCount, OutputTokens: u.CandidatesTokenCount + u.ThoughtsTokenCount, ContextTokens: u.PromptTokenCount,
		CacheReadTokens: u.CachedContentTokenCount, ReasoningTokens: u.ThoughtsTokenCount}
}
