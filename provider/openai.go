package provider

import (
	"encoding/json"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAITool is one entry of a Chat Completions request's "tools":
// {"type": "function", "function": {...}}.
type OpenAITool struct {
	// Type is always "function".
	Type string `json:"type"`
	// Function describes the function.
	Function OpenAIFunction `json:"function"`
}

// OpenAIFunction is a function definition of the Chat Completions API.
type OpenAIFunction struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments.
	Parameters map[string]any `json:"parameters,omitempty"`
	// Strict, when true, asks the API to hold the model's arguments to
	// Parameters exactly; the schema must then be strict-compatible (see
	// [OpenAIStrictSchema] and [OpenAIStrictTool]). Nil leaves it out.
	Strict *bool `json:"strict,omitempty"`
}

// OpenAIMessage is one message of a Chat Completions conversation: system,
// user, assistant (possibly with tool calls) or tool.
type OpenAIMessage struct {
	// Role is "system", "user", "assistant" or "tool".
	Role string `json:"role"`
	// Content is the text. An assistant message with tool calls and no text
	// is written with "content": null.
	Content string `json:"content"`
	// ToolCalls are an assistant message's tool calls.
	ToolCalls []OpenAIToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is, in a tool message, the id of the call it answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Parts, when set, is a user message's content as an array (text,
	// images, files: see [OpenAIContentPartOf]), written instead of
	// Content.
	Parts []OpenAIContentPart `json:"-"`
}

// MarshalJSON writes "content": null for an assistant message that has
// only tool calls, as the API documents it.
func (m OpenAIMessage) MarshalJSON() ([]byte, error) {
	type plain OpenAIMessage
	if len(m.Parts) > 0 {
		return m.partsObject().marshal()
	}
	if m.Content == "" && len(m.ToolCalls) > 0 {
		return json.Marshal(struct {
			plain
			Content *string `json:"content"`
		}{plain: plain(m)})
	}
	return json.Marshal(plain(m))
}

// OpenAIToolCall is one entry of an assistant message's "tool_calls".
type OpenAIToolCall struct {
	// ID identifies the call; the tool message echoes it.
	ID string `json:"id"`
	// Type is "function".
	Type string `json:"type"`
	// Function names the function and holds its arguments.
	Function OpenAIFunctionCall `json:"function"`
}

// OpenAIFunctionCall is the function part of an [OpenAIToolCall].
type OpenAIFunctionCall struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments is the arguments object encoded as a JSON string.
	Arguments string `json:"arguments"`
}

// OpenAITools converts tools to the Chat Completions "tools" array.
func OpenAITools(tools []llmtoolkit.Tool) []OpenAITool {
	out := make([]OpenAITool, len(tools))
	for i, t := range tools {
		out[i] = OpenAITool{Type: "function", Function: OpenAIFunction{Name: t.Name, Description: t.Description, Parameters: t.Parameters}}
	}
	return out
}

// openAIResponse is the part of a chat completion this package reads.
type openAIResponse struct {
	Choices []struct {
		Message      json.RawMessage `json:"message"`
		FinishReason string          `json:"finish_reason"`
	} `json:"choices"`
	Usage *openAIChatUsage `json:"usage"`
	Model string           `json:"model"`
}

type openAIAssistant struct {
	Role      string           `json:"role"`
	Content   *string          `json:"content"`
	ToolCalls []OpenAIToolCall `json:"tool_calls"`
}

// OpenAIToolCalls reads the tool calls of an assistant message, given
// either the message ({"role": "assistant", "tool_calls": [...]}) or a whole
// chat completion (its first choice's message). The arguments, a JSON
// string on the wire, are decoded with [llmtoolkit.ParseCall]; a call whose
// arguments are not a JSON object is returned as a
// [llmtoolkit.MalformedCall] (raw text and parse error kept), which
// [llmtoolkit.Execute] answers with an error result so that the model can
// try again. A message without tool calls gives none.
func OpenAIToolCalls(assistantMessage json.RawMessage) ([]llmtoolkit.Call, error) {
	msg, _, err := openAIMessage(assistantMessage)
	if err != nil {
		return nil, err
	}
	return openAICalls(msg)
}

func openAIMessage(raw json.RawMessage) (openAIAssistant, *openAIResponse, error) {
	var probe struct {
		Choices json.RawMessage `json:"choices"`
	}
	if err := decode("OpenAI", raw, &probe); err != nil {
		return openAIAssistant{}, nil, err
	}
	var msg openAIAssistant
	if probe.Choices == nil {
		return msg, nil, decode("OpenAI", raw, &msg)
	}
	var resp openAIResponse
	if err := decode("OpenAI", raw, &resp); err != nil {
		return msg, nil, err
	}
	if len(resp.Choices) == 0 {
		return msg, nil, fmt.Errorf("%w: OpenAI: the response has no choices", ErrInvalidPayload)
	}
	return msg, &resp, decode("OpenAI", resp.Choices[0].Message, &msg)
}

func openAICalls(msg openAIAssistant) ([]llmtoolkit.Call, error) {
	if len(msg.ToolCalls) == 0 {
		return nil, nil
	}
	calls := make([]llmtoolkit.Call, 0, len(msg.ToolCalls))
	for i, tc := range msg.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return nil, fmt.Errorf("%w: OpenAI: tool_calls[%d] has type %q; only \"function\" calls are supported", ErrInvalidPayload, i, tc.Type)
		}
		if tc.Function.Name == "" {
			return nil, fmt.Errorf("%w: OpenAI: tool_calls[%d] has no function name", ErrInvalidPayload, i)
		}
		calls = append(calls, llmtoolkit.ParseCallLenient(tc.ID, tc.Function.Name, tc.Function.Arguments))
	}
	distinctCallIDs(calls, GeneratedCallIDPrefix)
	return calls, nil
}

// OpenAIToolMessage converts a result to the "role": "tool" message that
// answers the call. The API has no error flag, so an error result's
// content is prefixed with "Error: ". A tool message takes text only: use
// [OpenAIToolMessages] for results with parts.
func OpenAIToolMessage(r llmtoolkit.Result) OpenAIMessage {
	if len(r.Parts) > 0 {
		m, _ := openAIToolMessage(r)
		return m
	}
	return OpenAIMessage{Role: "tool", ToolCallID: r.ToolCallID, Content: errorPrefixed(r)}
}

// OpenAIAssistantMessage builds the assistant message that carries calls,
// to replay a conversation. A malformed call's arguments are replayed as
// the model sent them. It fails only if arguments cannot be encoded.
func OpenAIAssistantMessage(content string, calls []llmtoolkit.Call) (OpenAIMessage, error) {
	m := OpenAIMessage{Role: "assistant", Content: content}
	for _, c := range calls {
		args, err := textArguments("OpenAI", c)
		if err != nil {
			return OpenAIMessage{}, err
		}
		m.ToolCalls = append(m.ToolCalls, OpenAIToolCall{ID: c.ID, Type: "function", Function: OpenAIFunctionCall{Name: c.Name, Arguments: args}})
	}
	return m, nil
}

// textArguments returns a call's arguments as the JSON text the OpenAI
// formats carry: the raw text of a malformed call, else the map encoded.
func textArguments(provider string, c llmtoolkit.Call) (string, error) {
	if c.Malformed != nil {
		return c.Malformed.Raw, nil
	}
	data, err := callArguments(provider, c)
	return string(data), err
}

// OpenAIMessages converts an agentloop conversation to Chat Completions
// messages, one for one, but for the images and files of tool results: a
// tool message takes text only, so they go in one user message after the
// turn's tool messages ([OpenAIToolMessages]). A user message's parts
// follow its text in its content array.
func OpenAIMessages(history []agentloop.Message) ([]OpenAIMessage, error) {
	out := make([]OpenAIMessage, 0, len(history))
	var turn []llmtoolkit.Result // the tool results of the turn being read
	flush := func() {
		if len(turn) > 0 {
			out = append(out, OpenAIToolMessages(turn)...)
			turn = turn[:0]
		}
	}
	for i, m := range history {
		if m.Role != agentloop.RoleTool {
			flush()
		}
		switch m.Role {
		case agentloop.RoleSystem, agentloop.RoleUser:
			msg := OpenAIMessage{Role: string(m.Role), Content: m.Content}
			if m.Role == agentloop.RoleUser && len(m.Parts) > 0 {
				msg.Parts = openAIContentParts(m.Content, m.Parts)
			}
			out = append(out, msg)
		case agentloop.RoleAssistant:
			am, err := OpenAIAssistantMessage(m.Content, m.ToolCalls)
			if err != nil {
				return nil, err
			}
			out = append(out, am)
		case agentloop.RoleTool:
			turn = append(turn, openAIToolResult(m))
		default:
			return nil, fmt.Errorf("provider: OpenAI: message %d has unknown role %q", i, m.Role)
		}
	}
	flush()
	return out, nil
}

// OpenAIResponse reads a chat completion body into an agentloop.Response:
// the first choice's text and tool calls, its finish_reason and the usage.
func OpenAIResponse(body json.RawMessage) (agentloop.Response, error) {
	msg, resp, err := openAIMessage(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	calls, err := openAICalls(msg)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{ToolCalls: calls}
	if msg.Content != nil {
		out.Content = *msg.Content
	}
	if resp != nil {
		out.StopReason, out.Model = resp.Choices[0].FinishReason, resp.Model
		if resp.Usage != nil {
			out.Usage = resp.Usage.usage()
		}
	}
	return out, nil
}
