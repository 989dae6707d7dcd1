package provider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// AnthropicTool is one entry of a Messages request's "tools": a client
// tool (name, description, input_schema), or a server tool the API runs
// (Type set, such as a tool search: see [AnthropicToolsWithSearch]).
type AnthropicTool struct {
	// Type is empty for a client tool, or a server tool's versioned type
	// ("tool_search_tool_regex_20251119").
	Type string `json:"type,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the input (a client tool's; always
	// set by [AnthropicTools]).
	InputSchema map[string]any `json:"input_schema,omitempty"`
	// DeferLoading keeps the tool's definition out of the model's context
	// until the API's tool search finds it ([llmtoolkit.Tool.Deferred],
	// written by [AnthropicToolsWithSearch]).
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// AnthropicContentBlock is a content block of a Messages conversation:
// "text", "tool_use", "tool_result", "thinking" or "redacted_thinking".
// Only the fields of its Type are written, each type with the fields the
// API requires (a tool_use's "input" and a thinking block's "thinking" even
// when empty). A block with Raw set is written as Raw, unchanged: that is
// how blocks replayed from a response (thinking with its signature, server
// tool blocks, text with citations) go back exactly as they came.
type AnthropicContentBlock struct {
	// Type is "text", "tool_use", "tool_result", "thinking",
	// "redacted_thinking", "image" or "document".
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
	// Thinking is a thinking block's text.
	Thinking string `json:"thinking,omitempty"`
	// Signature is a thinking block's signature.
	Signature string `json:"signature,omitempty"`
	// Data is a redacted_thinking block's encrypted content.
	Data string `json:"data,omitempty"`
	// Source is an image or a document block's bytes or URL.
	Source *AnthropicSource `json:"source,omitempty"`
	// Title is a document block's title (the file's name).
	Title string `json:"title,omitempty"`
	// Blocks, when set, is a tool_result block's content as blocks (its
	// text and its parts' blocks, see [AnthropicPartBlock]), written
	// instead of Content.
	Blocks []AnthropicContentBlock `json:"-"`
	// Raw, when set, is the whole block as the API sent it; it is written
	// instead of the fields above.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON writes Raw when set, else the fields of the block's type.
func (b AnthropicContentBlock) MarshalJSON() ([]byte, error) {
	if len(b.Raw) > 0 {
		return b.Raw, nil
	}
	switch b.Type {
	case "text":
		return json.Marshal(struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}{b.Type, b.Text})
	case "tool_use":
		input := b.Input
		if input == nil {
			input = map[string]any{}
		}
		return json.Marshal(struct {
			Type  string `json:"type"`
			ID    string `json:"id"`
			Name  string `json:"name"`
			Input any    `json:"input"`
		}{b.Type, b.ID, b.Name, input})
	case "image", "document":
		return marshalStreamed(b.streamJSON)
	case "tool_result":
		if len(b.Blocks) > 0 {
			return marshalStreamed(b.streamJSON)
		}
		return json.Marshal(struct {
			Type      string `json:"type"`
			ToolUseID string `json:"tool_use_id"`
			Content   string `json:"content"`
			IsError   bool   `json:"is_error,omitempty"`
		}{b.Type, b.ToolUseID, b.Content, b.IsError})
	case "thinking":
		return json.Marshal(struct {
			Type      string `json:"type"`
			Thinking  string `json:"thinking"`
			Signature string `json:"signature"`
		}{b.Type, b.Thinking, b.Signature})
	case "redacted_thinking":
		return json.Marshal(struct {
			Type string `json:"type"`
			Data string `json:"data"`
		}{b.Type, b.Data})
	}
	type plain AnthropicContentBlock
	return json.Marshal(plain(b))
}

// AnthropicMessage is one message of a Messages conversation.
type AnthropicMessage struct {
	// Role is "user" or "assistant".
	Role string `json:"role"`
	// Content is the message's blocks.
	Content []AnthropicContentBlock `json:"content"`
}

// AnthropicTools converts tools to the Messages "tools" array. A tool
// whose [llmtoolkit.Tool.Native] is "anthropic/TYPE" (codetools'
// str_replace_based_edit_tool: "anthropic/text_editor_20250728") is
// written as Anthropic's own client tool, {"type": TYPE, "name": NAME},
// without a schema: the model knows its input. Its calls come back as
// tool_use blocks and its results go as tool_result blocks, as any tool's.
func AnthropicTools(tools []llmtoolkit.Tool) []AnthropicTool {
	out := make([]AnthropicTool, len(tools))
	for i, t := range tools {
		schema := t.Parameters
		if schema == nil {
			schema = map[string]any{"type": "object", "properties": map[string]any{}}
		}
		if typ, ok := strings.CutPrefix(t.Native, "anthropic/"); ok {
			// Anthropic's own client tool: the model knows its input.
			out[i] = AnthropicTool{Type: typ, Name: t.Name}
			continue
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
	Usage      *anthropicUsage `json:"usage"`
	Model      string          `json:"model"`
}

// anthropicState is the value of [StateAnthropic] on an assistant message.
type anthropicState struct {
	Content []json.RawMessage `json:"content"`
}

// anthropicTurn is what one assistant message holds.
type anthropicTurn struct {
	text  string
	calls []llmtoolkit.Call
	state llmtoolkit.ProviderState // nil unless the blocks need replaying
}

// AnthropicToolCalls reads the tool_use blocks of an assistant message,
// given the whole Messages response, the message ({"role": "assistant",
// "content": [...]}) or its content array. Other blocks are skipped. A
// tool_use whose input is not an object gives a [llmtoolkit.MalformedCall].
func AnthropicToolCalls(assistantMessage json.RawMessage) ([]llmtoolkit.Call, error) {
	_, turn, err := anthropicRead(assistantMessage)
	return turn.calls, err
}

func anthropicRead(raw json.RawMessage) (anthropicResponse, anthropicTurn, error) {
	var resp anthropicResponse
	content := raw
	if !isArray(raw) {
		if err := decode("Anthropic", raw, &resp); err != nil {
			return resp, anthropicTurn{}, err
		}
		if resp.Content == nil {
			return resp, anthropicTurn{}, fmt.Errorf("%w: Anthropic: the message has no \"content\"", ErrInvalidPayload)
		}
		content = resp.Content
	}
	if !isArray(content) {
		var s string // a plain-text content string has no tool calls
		if err := decode("Anthropic", content, &s); err != nil {
			return resp, anthropicTurn{}, fmt.Errorf("%w: Anthropic: \"content\" must be an array of blocks or a string", ErrInvalidPayload)
		}
		return resp, anthropicTurn{text: s}, nil
	}
	var raws []json.RawMessage
	if err := decode("Anthropic", content, &raws); err != nil {
		return resp, anthropicTurn{}, err
	}
	turn, err := anthropicBlocks(raws)
	distinctCallIDs(turn.calls, GeneratedCallIDPrefix)
	return resp, turn, err
}

// anthropicBlocks reads an assistant turn from its content blocks. The
// blocks are kept as state when any of them is more than text or tool_use
// (thinking, redacted_thinking, server tools), so that the turn can be
// replayed exactly.
func anthropicBlocks(raws []json.RawMessage) (anthropicTurn, error) {
	var turn anthropicTurn
	var text []string
	keep := false
	for i, raw := range raws {
		var b anthropicBlock
		if err := decode("Anthropic", raw, &b); err != nil {
			return anthropicTurn{}, fmt.Errorf("content[%d]: %w", i, err)
		}
		switch b.Type {
		case "text":
			text = append(text, b.Text)
		case "tool_use":
			if b.Name == "" {
				return anthropicTurn{}, fmt.Errorf("%w: Anthropic: content[%d] is a tool_use block without a name", ErrInvalidPayload, i)
			}
			turn.calls = append(turn.calls, objectCall("Anthropic", b.ID, b.Name, b.Input))
		default:
			keep = true
		}
	}
	turn.text = strings.Join(text, "")
	if keep {
		turn.state = stateWith(nil, StateAnthropic, anthropicState{Content: raws})
	}
	return turn, nil
}

// AnthropicToolResult converts a result to the tool_result block that
// answers the tool_use, with "is_error" for a failure. Tool results go in a
// user message; see [AnthropicToolResultsMessage].
func AnthropicToolResult(r llmtoolkit.Result) AnthropicContentBlock {
	if len(r.Parts) > 0 {
		return AnthropicContentBlock{Type: "tool_result", ToolUseID: r.ToolCallID, IsError: r.IsError, Blocks: anthropicPartBlocks(r.Content, r.Parts)}
	}
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
// conversation. A malformed call's input is {}: the API takes objects only.
func AnthropicToolUse(c llmtoolkit.Call) AnthropicContentBlock {
	args := c.Arguments
	if args == nil || c.Malformed != nil {
		args = map[string]any{}
	}
	return AnthropicContentBlock{Type: "tool_use", ID: c.ID, Name: c.Name, Input: args}
}

// AnthropicAssistantMessage builds the assistant message that replays m.
// When m carries the answer's blocks ([StateAnthropic]) and they still
// agree with its text and calls, they are written back unchanged, thinking
// and redacted_thinking blocks with their signatures in their place. When
// m was edited since, its thinking blocks come first, in order, then the
// text and the calls. A message with nothing to send gives ok false: leave
// it out (the API refuses an empty assistant turn).
func AnthropicAssistantMessage(m agentloop.Message) (msg AnthropicMessage, ok bool) {
	msg = AnthropicMessage{Role: "assistant"}
	var st anthropicState
	if stateGet(m.Provider, StateAnthropic, &st) {
		if anthropicMatches(st.Content, m) {
			for _, raw := range st.Content {
				msg.Content = append(msg.Content, AnthropicContentBlock{Raw: raw})
			}
			return msg, len(msg.Content) > 0
		}
		for _, raw := range st.Content {
			var b anthropicBlock
			if json.Unmarshal(raw, &b) == nil && (b.Type == "thinking" || b.Type == "redacted_thinking") {
				msg.Content = append(msg.Content, AnthropicContentBlock{Type: b.Type, Raw: raw})
			}
		}
	}
	if m.Content != "" {
		msg.Content = append(msg.Content, AnthropicContentBlock{Type: "text", Text: m.Content})
	}
	for _, c := range m.ToolCalls {
		msg.Content = append(msg.Content, AnthropicToolUse(c))
	}
	return msg, len(msg.Content) > 0
}

// anthropicMatches reports whether the blocks of an answer still say what
// message m says: the same text, and the same calls (ids and names) in the
// same order. It reads no more of the blocks than that.
func anthropicMatches(raws []json.RawMessage, m agentloop.Message) bool {
	rest, n := m.Content, 0
	for _, raw := range raws {
		var b struct{ Type, Text, ID, Name string }
		if json.Unmarshal(raw, &b) != nil {
			return false
		}
		switch b.Type {
		case "text":
			if !strings.HasPrefix(rest, b.Text) {
				return false
			}
			rest = rest[len(b.Text):]
		case "tool_use":
			if !sameCall(m, n, b.ID, b.Name) {
				return false
			}
			n++
		}
	}
	return rest == "" && n == len(m.ToolCalls)
}

// sameCall reports whether m's call number n has this id and name.
func sameCall(m agentloop.Message, n int, id, name string) bool {
	return n < len(m.ToolCalls) && m.ToolCalls[n].ID == id && m.ToolCalls[n].Name == name
}

// AnthropicMessages converts an agentloop conversation to the Messages
// API's "system" text (system messages joined by blank lines) and
// "messages": the tool messages that follow an assistant message are
// grouped in one user message, as the API requires. Assistant messages are
// written by [AnthropicAssistantMessage] (thinking blocks replayed; an
// empty one left out).
func AnthropicMessages(history []agentloop.Message) (system string, messages []AnthropicMessage, err error) {
	var sys []string
	for i, m := range history {
		switch m.Role {
		case agentloop.RoleSystem:
			sys = append(sys, m.Content)
		case agentloop.RoleUser:
			messages = append(messages, anthropicUserMessage(m.Content, m.Parts))
		case agentloop.RoleAssistant:
			if am, ok := AnthropicAssistantMessage(m); ok {
				messages = append(messages, am)
			}
		case agentloop.RoleTool:
			block := AnthropicToolResult(llmtoolkit.Result{ToolCallID: m.ToolCallID, Content: m.Content, IsError: m.IsError, Parts: m.Parts})
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
// calls, stop_reason and usage (ContextTokens: input_tokens with the
// cache counts). When the answer has thinking,
// redacted_thinking or other blocks, all its blocks are kept in
// Response.Provider ([StateAnthropic]) for [AnthropicMessages] to replay.
func AnthropicResponse(body json.RawMessage) (agentloop.Response, error) {
	resp, turn, err := anthropicRead(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: turn.text, ToolCalls: turn.calls, StopReason: resp.StopReason, Provider: turn.state, Model: resp.Model}
	if resp.Usage != nil {
		out.Usage = resp.Usage.usage()
	}
	return out, nil
}
