package provider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// AnthropicTool is one entry of a Messages request's "tools".
type AnthropicTool struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the input.
	InputSchema map[string]any `json:"input_schema"`
}

// AnthropicContentBlock is a content block of a Messages conversation:
// "text", "tool_use" or "tool_result". Only the fields of its Type are set.
type AnthropicContentBlock struct {
	// Type is "text", "tool_use" or "tool_result".
	Type string `json:"type"`
	// Text is a text block's text.
	Text string `json:"text,omitempty"`
	// ID is a tool_use block's id.
	ID string `json:"id,omitempty"`
	// Name is a tool_use block's tool name.
	Name string `json:"name,omitempty"`
	// Input is a tool_use block's input object (a map, written even when
	// empty).
	Input any `json:"input,omitempty"`
	// ToolUseID is, in a tool_result block, the id of the tool_use it answers.
	ToolUseID string `json:"tool_use_id,omitempty"`
	// Content is a tool_result block's output.
	Content string `json:"content,omitempty"`
	// IsError marks a tool_result block that reports a failure.
	IsError bool `json:"is_error,omitempty"`
}

// AnthropicMessage is one message of a Messages conversation.
type AnthropicMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message's blocks.
	Content []AnthropicContentBlock `json:"content"`
}

// AnthropicTools converts tools to the Messages "tools" array.
func AnthropicTools(tools []llmtoolkit.Tool) []AnthropicTool {
	out := make([]AnthropicTool, len(tools))
	for i, t := range tools {
		schema := t.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		out[i] = AnthropicTool{Name: t.Name, Description: t.Description, InputSchema: schema}
	}
	return out
}

type anthropicBlock struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

type anthropicResponse struct {
	Content    json.RawMessage `json:"content"`
	StopReason string          `json:"stop_reason"`
	Usage      *struct {
		InputTokens  int `json:"input_tokens"`
		OutputTokens int `json:"output_tokens"`
	} `json:"usage"`
}

// AnthropicToolCalls reads the tool_use blocks of an assistant message,
// given the whole Messages response, the message ({"role": "assistant",
// "content": [...]}) or its content array. Other blocks are skipped.
func AnthropicToolCalls(assistantMessage json.RawMessage) ([]llmtoolkit.Call, error) {
	_, calls, _, err := anthropicRead(assistantMessage)
	return calls, err
}

func anthropicRead(raw json.RawMessage) (anthropicResponse, []llmtoolkit.Call, string, error) {
	var resp anthropicResponse
	content := raw
	if !isArray(raw) {
		if err := decode("Anthropic", raw, &resp); err != nil {
			return resp, nil, "", err
		}
		if resp.Content == nil {
			return resp, nil, "", fmt.Errorf("%w: Anthropic: the message has no \"content\"", ErrInvalidPayload)
		}
		content = resp.Content
	}
	var blocks []anthropicBlock
	if isArray(content) {
		if err := decode("Anthropic", content, &blocks); err != nil {
			return resp, nil, "", err
		}
	} else {
		var s string // a plain-text content string has no tool calls
		if err := decode("Anthropic", content, &s); err != nil {
			return resp, nil, "", fmt.Errorf("%w: Anthropic: \"content\" must be an array of blocks or a string", ErrInvalidPayload)
		}
		return resp, nil, s, nil
	}
	var calls []llmtoolkit.Call
	var text []string
	for i, b := range blocks {
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			if b.Name == "" {
				return resp, nil, "", fmt.Errorf("%w: Anthropic: content[%d] is a tool_use block without a name", ErrInvalidPayload, i)
			}
			args, err := argumentsMap("Anthropic", b.Name, b.Input)
			if err != nil {
				return resp, nil, "", err
			}
			calls = append(calls, llmtoolkit.Call{ID: b.ID, Name: b.Name, Arguments: args})
		}
	}
	return resp, calls, strings.Join(text, ""), nil
}

// AnthropicToolResult converts a result to the tool_result block that
// answers the tool_use, with "is_error" for a failure. Tool results go in a
// user message; see [AnthropicToolResultsMessage].
func AnthropicToolResult(r llmtoolkit.Result) AnthropicContentBlock {
	return AnthropicContentBlock{Type: "tool_result", ToolUseID: r.ToolCallID, Content: r.Content, IsError: r.IsError}
}

// AnthropicToolResultsMessage puts the results of one turn, in order, in
// the user message that answers it.
func AnthropicToolResultsMessage(results []llmtoolkit.Result) AnthropicMessage {
	m := AnthropicMessage{Role: "user"}
	for _, r := range results {
		m.Content = append(m.Content, AnthropicToolResult(r))
	}
	return m
}

// AnthropicToolUse converts a call to a tool_use block, to replay a
// conversation.
func AnthropicToolUse(c llmtoolkit.Call) AnthropicContentBlock {
	args := c.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return AnthropicContentBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: args}
}

// AnthropicMessages converts an agentloop conversation to the Messages
// API's "system" text (system messages joined by blank lines) and
// "messages": the tool messages that follow an assistant message are
// grouped in one user message, as the API requires.
func AnthropicMessages(history []agentloop.Message) (system string, messages []AnthropicMessage, err error) {
	var sys []string
	for i, m := range history {
		switch m.Role {
		case agentloop.RoleSystem:
			sys = append(sys, m.Content)
		case agentloop.RoleUser:
			messages = append(messages, AnthropicMessage{Role: "user", Content: []AnthropicContentBlock{{Type: "text", Text: m.Content}}})
		case agentloop.RoleAssistant:
			am := AnthropicMessage{Role: "assistant"}
			if m.Content != "" {
				am.Content = append(am.Content, AnthropicContentBlock{Type: "text", Text: m.Content})
			}
			for _, c := range m.ToolCalls {
				am.Content = append(am.Content, AnthropicToolUse(c))
			}
			messages = append(messages, am)
		case agentloop.RoleTool:
			block := AnthropicToolResult(llmtoolkit.Result{ToolCallID: m.ToolCallID, Content: m.Content, IsError: m.IsError})
			if n := len(messages); n > 0 && messages[n-1].Role == "user" && len(messages[n-1].Content) > 0 &&
				messages[n-1].Content[0].Type == "tool_result" {
				messages[n-1].Content = append(messages[n-1].Content, block)
			} else {
				messages = append(messages, AnthropicMessage{Role: "user", Content: []AnthropicContentBlock{block}})
			}
		default:
			return "", nil, fmt.Errorf("provider: Anthropic: message %d has unknown role %q", i, m.Role)
		}
	}
	return strings.Join(sys, "\n\n"), messages, nil
}

// AnthropicResponse reads a Messages response body into an
// agentloop.Response: the text blocks joined, the tool_use blocks as
// calls, stop_reason and usage.
func AnthropicResponse(body json.RawMessage) (agentloop.Response, error) {
	resp, calls, text, err := anthropicRead(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: text, ToolCalls: calls, StopReason: resp.StopReason}
	if resp.Usage != nil {
		out.Usage = agentloop.Usage{InputTokens: resp.Usage.InputTokens, OutputTokens: resp.Usage.OutputTokens}
	}
	return out, nil
}
