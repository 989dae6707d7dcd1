package agentloop

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit"
)

// Role is who wrote a [Message].
type Role string

// The roles of a conversation.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// Message is one message of a conversation, independent of any provider's
// wire format.
type Message struct {
	// Role says who wrote the message.
	Role Role `json:"role"`
	// Content is the text: the prompt, the model's answer, or a tool's output.
	Content string `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []llmtoolkit.Call `json:"tool_calls,omitempty"`
	// ToolCallID is, in a tool message, the id of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// ToolName is, in a tool message, the name of the tool that ran.
	ToolName string `json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Parts, in a tool or a user message, is the multimodal content after
	// Content, in order: a tool's images and documents
	// ([llmtoolkit.Result.Parts]), a user's pictures. Package provider
	// writes them as each format documents it. Nil for text alone (and
	// left out of the JSON).
	Parts []llmtoolkit.Part `json:"parts,omitempty"`
	// Provider is, in an assistant message, the provider state of the
	// answer it records ([Response.Provider]): reasoning blocks, thought
	// signatures, reasoning items. Package provider's history converters
	// send it back to the provider that wrote it and ignore another's. Keep
	// it when storing a conversation.
	Provider llmtoolkit.ProviderState `json:"provider,omitempty"`
}

// SystemMessage returns a system message.
func SystemMessage(content string) Message { return Message{Role: RoleSystem, Content: content} }

// UserMessage returns a user message.
func UserMessage(content string) Message { return Message{Role: RoleUser, Content: content} }

// UserMessageWithParts returns a user message whose text is followed by
// parts (images, documents).
func UserMessageWithParts(content string, parts ...llmtoolkit.Part) Message {
	return Message{Role: RoleUser, Content: content, Parts: parts}
}

// AssistantMessage returns an assistant message with optional tool calls.
func AssistantMessage(content string, calls ...llmtoolkit.Call) Message {
	return Message{Role: RoleAssistant, Content: content, ToolCalls: calls}
}

// ToolMessage returns the tool message that carries res back to the model,
// its parts included.
func ToolMessage(res llmtoolkit.Result) Message {
	return Message{Role: RoleTool, Content: res.Content, ToolCallID: res.ToolCallID, ToolName: res.Name, IsError: res.IsError, Parts: res.Parts}
}

// Usage counts the tokens of one model call, as the provider reports them.
//
// The cache and reasoning counts are parts of the prompt and of the
// output, never added to them: CacheReadTokens and CacheWriteTokens are
// part of the whole prompt ([Usage.Prompt]: ContextTokens, else
// InputTokens), ReasoningTokens part of OutputTokens. Package provider's
// parsers set them from every format and stream: OpenAI Chat's
// prompt_tokens_details.cached_tokens and
// completion_tokens_details.reasoning_tokens, Responses'
// input_tokens_details.cached_tokens and
// output_tokens_details.reasoning_tokens, Anthropic's
// cache_read_input_tokens and cache_creation_input_tokens (its thinking
// is billed as output and not counted apart), Gemini's
// cachedContentTokenCount and thoughtsTokenCount. No format but
// Anthropic's reports cache writes.
type Usage struct {
	// InputTokens is the number of prompt tokens.
	InputTokens int `json:"input_tokens"`
	// OutputTokens is the number of generated tokens, reasoning included.
	OutputTokens int `json:"output_tokens"`
	// ContextTokens is the size of the whole prompt, cached parts
	// included, where InputTokens leaves them out (Anthropic's
	// input_tokens + cache_creation_input_tokens +
	// cache_read_input_tokens); package provider's parsers set it for
	// every format. 0: not reported (InputTokens is then the size).
	ContextTokens int `json:"context_tokens,omitempty"`
	// CacheReadTokens is how many tokens of the prompt were read from the
	// provider's prompt cache (billed at its cache-read price).
	CacheReadTokens int `json:"cache_read_tokens,omitempty"`
	// CacheWriteTokens is how many tokens of the prompt were written to
	// the provider's prompt cache (billed at its cache-write price).
	CacheWriteTokens int `json:"cache_write_tokens,omitempty"`
	// ReasoningTokens is how many of OutputTokens the model spent
	// reasoning (thinking), where the provider counts them apart.
	ReasoningTokens int `json:"reasoning_tokens,omitempty"`
	// CostUSD is the call's cost in US dollars as the provider reported it
	// in its answer (OpenRouter's usage.cost, in the OpenAI formats); nil
	// when it did not. [Prices.Cost] takes it as the call's cost.
	CostUSD *float64 `json:"cost_usd,omitempty"`
}

// Prompt returns the size of the whole prompt: ContextTokens, else
// InputTokens.
func (u Usage) Prompt() int {
	if u.ContextTokens > 0 {
		return u.ContextTokens
	}
	return u.InputTokens
}

// Add returns the sum of u and v. Their reported costs add up when both
// have one; when only one has, the sum has none (a partial sum would pass
// for the whole).
func (u Usage) Add(v Usage) Usage {
	s := Usage{InputTokens: u.InputTokens + v.InputTokens, OutputTokens: u.OutputTokens + v.OutputTokens, ContextTokens: u.ContextTokens + v.ContextTokens,
		CacheReadTokens: u.CacheReadTokens + v.CacheReadTokens, CacheWriteTokens: u.CacheWriteTokens + v.CacheWriteTokens, ReasoningTokens: u.ReasoningTokens + v.ReasoningTokens}
	if u.CostUSD != nil && v.CostUSD != nil {
		c := *u.CostUSD + *v.CostUSD
		s.CostUSD = &c
	}
	return s
}

// Response is one answer of the model.
type Response struct {
	// Content is the model's text.
	Content string `json:"content,omitempty"`
	// ToolCalls are the tools the model asks to run; none ends the loop.
	ToolCalls []llmtoolkit.Call `json:"tool_calls,omitempty"`
	// Usage counts the tokens of this call.
	Usage Usage `json:"usage"`
	// Model is the model that answered, as the provider names it in its
	// answer (package provider's parsers set it; Gemini's modelVersion).
	// The loop prices the call by it ([Options.Prices]), else by
	// [Options.Model].
	Model string `json:"model,omitempty"`
	// StopReason is the provider's reason for stopping ("stop", "end_turn",
	// "tool_calls", "tool_use", "STOP", ...), passed through as is.
	StopReason string `json:"stop_reason,omitempty"`
	// Provider is what the provider returned beside the text and the calls
	// that it needs back in the next request (see
	// [llmtoolkit.ProviderState]), filled by package provider's response
	// parsers. [Run] keeps it on the assistant message it appends.
	Provider llmtoolkit.ProviderState `json:"provider,omitempty"`
}

// Message returns the assistant message that records r in the history:
// its text, calls and provider state.
func (r Response) Message() Message {
	return Message{Role: RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls, Provider: r.Provider}
}

// SendFunc sends the conversation and the available tools to a model and
// returns its answer. It is where a host plugs in a provider: convert the
// messages and tools to the provider's format (see package provider), make
// the request, and convert the answer back. It should honour ctx.
type SendFunc func(ctx context.Context, messages []Message, tools []llmtoolkit.Tool) (Response, error)
