package provider

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAIResponsesTool is one entry of a Responses API request's "tools",
// in that API's flat format: {"type": "function", "name", "description",
// "parameters", "strict"}.
type OpenAIResponsesTool struct {
	// Type is "function", "tool_search" for the API's tool search
	// ([OpenAIResponsesToolsWithSearch]), or a native tool's type
	// ([OpenAIResponsesApplyPatchType], [OpenAIResponsesShellType]).
	Type string `json:"type"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Parameters is the JSON Schema of the arguments.
	Parameters map[string]any `json:"parameters"`
	// Strict asks the API to hold the model's arguments to Parameters
	// exactly. It is always written: the API treats a missing "strict" as
	// true, which refuses most schemas (see [OpenAIStrictSchema]).
	Strict bool `json:"strict"`
	// DeferLoading keeps the function's definition out of the model's
	// context until the API's tool search loads it
	// ([llmtoolkit.Tool.Deferred], written by
	// [OpenAIResponsesToolsWithSearch]).
	DeferLoading bool `json:"defer_loading,omitempty"`
}

// MarshalJSON writes a function tool with its fields, and a "tool_search",
// "apply_patch" or "shell" tool as its type alone ({"type": "shell"}).
func (t OpenAIResponsesTool) MarshalJSON() ([]byte, error) {
	if isOpenAIResponsesNativeType(t.Type) {
		return json.Marshal(struct {
			Type string `json:"type"`
		}{t.Type})
	}
	type plain OpenAIResponsesTool
	return json.Marshal(plain(t))
}

// OpenAIResponsesItem is one item of a Responses API request's "input":
// a message ("system", "user" or "assistant" with text), a
// "function_call" the model made, the "function_call_output" that answers
// it, or an item replayed from a response (a "reasoning" item with its
// encrypted_content, ...). Only the fields of its Type are written. An item
// with Raw set is written as Raw, unchanged.
type OpenAIResponsesItem struct {
	// Type is "message", "function_call", "function_call_output" or, for
	// a replayed item, the type it had.
	Type string `json:"type"`
	// ID is the item's id: a function_call's "fc_..." id, when known.
	ID string `json:"id,omitempty"`
	// Role is a message's role: "system", "developer", "user" or
	// "assistant".
	Role string `json:"role,omitempty"`
	// Content is a message's text.
	Content string `json:"content,omitempty"`
	// CallID links a function_call and its function_call_output.
	CallID string `json:"call_id,omitempty"`
	// Name is a function_call's function name.
	Name string `json:"name,omitempty"`
	// Arguments is a function_call's arguments, a JSON object as text.
	Arguments string `json:"arguments,omitempty"`
	// Output is a function_call_output's or an apply_patch_call_output's
	// text.
	Output string `json:"output,omitempty"`
	// Status is an apply_patch_call_output's: "completed" or "failed".
	Status string `json:"status,omitempty"`
	// ShellOutput is a shell_call_output's "output": an entry per command.
	ShellOutput []OpenAIResponsesShellOutput `json:"-"`
	// MaxOutputLength is a shell_call_output's max_output_length, the
	// call's own echoed (0: not written).
	MaxOutputLength int64 `json:"-"`
	// ContentParts, when set, is a message's "content" or a
	// function_call_output's "output" as an array (text, images, files:
	// see [OpenAIResponsesPart]), written instead of Content or Output.
	ContentParts []OpenAIResponsesContent `json:"-"`
	// Raw, when set, is the whole item as the API sent it; it is written
	// instead of the fields above.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON writes Raw when set, else the fields of the item's type,
// each with the fields the API requires.
func (it OpenAIResponsesItem) MarshalJSON() ([]byte, error) {
	if len(it.Raw) > 0 {
		return it.Raw, nil
	}
	if it.carriesParts() {
		return it.partsObject().marshal()
	}
	switch it.Type {
	case "message":
		return json.Marshal(struct {
			Type    string `json:"type"`
			Role    string `json:"role"`
			Content string `json:"content"`
		}{it.Type, it.Role, it.Content})
	case "function_call":
		return json.Marshal(struct {
			Type      string `json:"type"`
			ID        string `json:"id,omitempty"`
			CallID    string `json:"call_id"`
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		}{it.Type, it.ID, it.CallID, it.Name, it.Arguments})
	case "function_call_output":
		return json.Marshal(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Output string `json:"output"`
		}{it.Type, it.CallID, it.Output})
	case itemApplyPatchCallOutput:
		return json.Marshal(struct {
			Type   string `json:"type"`
			CallID string `json:"call_id"`
			Status string `json:"status"`
			Output string `json:"output"`
		}{it.Type, it.CallID, it.Status, it.Output})
	case itemShellCallOutput:
		out := it.ShellOutput
		if out == nil {
			out = []OpenAIResponsesShellOutput{}
		}
		return json.Marshal(struct {
			Type            string                       `json:"type"`
			CallID          string                       `json:"call_id"`
			Output          []OpenAIResponsesShellOutput `json:"output"`
			MaxOutputLength int64                        `json:"max_output_length,omitempty"`
		}{it.Type, it.CallID, out, it.MaxOutputLength})
	}
	type plain OpenAIResponsesItem
	return json.Marshal(plain(it))
}

// OpenAIResponsesTools converts tools to the Responses API "tools" array,
// with "strict": false (the API's default is true, which most schemas do
// not satisfy). Use [OpenAIResponsesStrictTool] for strict tools. A tool
// whose [llmtoolkit.Tool.Native] is "openai/apply_patch" or "openai/shell"
// and whose name is that type (codetools' apply_patch and shell, as
// WithModelTools makes them for the GPT-5 family) is written as the API's
// own tool, {"type": "apply_patch"} or {"type": "shell"}: the model knows
// its input. Its calls come back as apply_patch_call and shell_call items,
// read as calls of the tool ([OpenAIResponsesApplyPatchType],
// [OpenAIResponsesShellType]), and are answered by the items
// [OpenAIResponsesCallOutput] writes.
func OpenAIResponsesTools(tools []llmtoolkit.Tool) []OpenAIResponsesTool {
	out := make([]OpenAIResponsesTool, len(tools))
	for i, t := range tools {
		if typ, ok := openAIResponsesNative(t); ok {
			out[i] = OpenAIResponsesTool{Type: typ, Name: t.Name}
			continue
		}
		out[i] = OpenAIResponsesTool{Type: "function", Name: t.Name, Description: t.Description, Parameters: parametersOrEmpty(t.Parameters)}
	}
	return out
}

// parametersOrEmpty returns params, or the schema of no arguments.
func parametersOrEmpty(params map[string]any) map[string]any {
	if params == nil {
		return map[string]any{"type": "object", "properties": map[string]any{}}
	}
	return params
}

// openAIResponsesBody is the part of a Responses API response this package
// reads.
type openAIResponsesBody struct {
	Status            string            `json:"status"`
	Output            []json.RawMessage `json:"output"`
	IncompleteDetails *struct {
		Reason string `json:"reason"`
	} `json:"incomplete_details"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Usage *openAIResponsesUsage `json:"usage"`
	Model string                `json:"model"`
}

type openAIResponsesItemIn struct {
	Type   string `json:"type"`
	ID     string `json:"id"`
	CallID string `json:"call_id"`
	Name   string `json:"name"`
	// Arguments is a function_call's arguments, a JSON string; other items
	// (a tool_search_call's object) are not read.
	Arguments json.RawMessage `json:"arguments"`
	Content   []struct {
		Type    string `json:"type"`
		Text    string `json:"text"`
		Refusal string `json:"refusal"`
	} `json:"content"`
	// The native calls' fields: an apply_patch_call's operation, a
	// shell_call's action and environment, their status.
	Operation   json.RawMessage `json:"operation"`
	Action      json.RawMessage `json:"action"`
	Environment json.RawMessage `json:"environment"`
	Status      string          `json:"status"`
}

// openAIResponsesState is the value of [StateOpenAIResponses] on an
// assistant message.
type openAIResponsesState struct {
	Output []json.RawMessage `json:"output"`
}

// openAIResponsesCallState is the value of [StateOpenAIResponses] on a
// call: its item id and, for a native call, the item's type and the fields
// that replay it.
type openAIResponsesCallState struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind,omitempty"` // "apply_patch_call", "shell_call"; "" for a function_call
	Status      string          `json:"status,omitempty"`
	Operation   json.RawMessage `json:"operation,omitempty"`
	Action      json.RawMessage `json:"action,omitempty"`
	Environment json.RawMessage `json:"environment,omitempty"`
}

// openAIResponsesTurn is what one response's output holds.
type openAIResponsesTurn struct {
	text  string
	calls []llmtoolkit.Call
	state llmtoolkit.ProviderState // nil unless the items need replaying
}

// OpenAIResponsesToolCalls reads the function_call items of a Responses
// API response, given the whole response or its "output" array. Each
// call's ID is the item's call_id (what the function_call_output echoes);
// its item id is kept in the call's Provider state. Arguments that are not
// a JSON object give a [llmtoolkit.MalformedCall].
func OpenAIResponsesToolCalls(response json.RawMessage) ([]llmtoolkit.Call, error) {
	_, turn, err := openAIResponsesRead(response)
	return turn.calls, err
}

func openAIResponsesRead(raw json.RawMessage) (openAIResponsesBody, openAIResponsesTurn, error) {
	var body openAIResponsesBody
	if isArray(raw) {
		if err := decode("OpenAI Responses", raw, &body.Output); err != nil {
			return body, openAIResponsesTurn{}, err
		}
	} else {
		if err := decode("OpenAI Responses", raw, &body); err != nil {
			return body, openAIResponsesTurn{}, err
		}
		if body.Error != nil && body.Error.Message != "" {
			return body, openAIResponsesTurn{}, fmt.Errorf("%w: OpenAI Responses: the response failed: %s (%s)", ErrInvalidPayload, body.Error.Message, body.Error.Code)
		}
		if body.Output == nil {
			return body, openAIResponsesTurn{}, fmt.Errorf("%w: OpenAI Responses: the response has no \"output\"", ErrInvalidPayload)
		}
	}
	turn, err := openAIResponsesItems(body.Output)
	return body, turn, err
}

// openAIResponsesItems reads a response's output items. They are kept as
// state when any of them is more than a message or a function call (a
// reasoning item, say), so that they can be replayed exactly.
func openAIResponsesItems(raws []json.RawMessage) (openAIResponsesTurn, error) {
	var turn openAIResponsesTurn
	var text []string
	keep := false
	for i, raw := range raws {
		var it openAIResponsesItemIn
		if err := decode("OpenAI Responses", raw, &it); err != nil {
			return openAIResponsesTurn{}, fmt.Errorf("output[%d]: %w", i, err)
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				switch c.Type {
				case "output_text":
					text = append(text, c.Text)
				case "refusal":
					text = append(text, c.Refusal)
				}
			}
		case "function_call":
			if it.Name == "" {
				return openAIResponsesTurn{}, fmt.Errorf("%w: OpenAI Responses: output[%d] is a function_call without a name", ErrInvalidPayload, i)
			}
			args := ""
			if len(it.Arguments) > 0 && string(it.Arguments) != "null" {
				if err := decode("OpenAI Responses", it.Arguments, &args); err != nil {
					return openAIResponsesTurn{}, fmt.Errorf("output[%d]: function_call arguments must be a string: %w", i, err)
				}
			}
			call := llmtoolkit.ParseCallLenient(it.CallID, it.Name, args)
			if it.ID != "" {
				call.Provider = stateWith(nil, StateOpenAIResponses, openAIResponsesCallState{ID: it.ID})
			}
			turn.calls = append(turn.calls, call)
		case itemApplyPatchCall, itemShellCall:
			call := openAIResponsesNativeCall(it)
			call.Provider = stateWith(nil, StateOpenAIResponses, openAIResponsesCallState{
				ID: it.ID, Kind: it.Type, Status: it.Status,
				Operation: notNull(it.Operation), Action: notNull(it.Action), Environment: notNull(it.Environment),
			})
			turn.calls = append(turn.calls, call)
		default:
			keep = true
		}
	}
	turn.text = strings.Join(text, "")
	distinctCallIDs(turn.calls, GeneratedCallIDPrefix)
	if keep {
		turn.state = stateWith(nil, StateOpenAIResponses, openAIResponsesState{Output: raws})
	}
	return turn, nil
}

// OpenAIResponsesToolOutput converts a result to the function_call_output
// item that answers the call. The API has no error flag, so an error
// result's output is prefixed with "Error: ". A result with parts gets its
// output as an array: its text, then each part ([OpenAIResponsesPart]).
func OpenAIResponsesToolOutput(r llmtoolkit.Result) OpenAIResponsesItem {
	if len(r.Parts) > 0 {
		return OpenAIResponsesItem{Type: "function_call_output", CallID: r.ToolCallID, ContentParts: openAIResponsesContents(errorPrefixed(r), r.Parts)}
	}
	return OpenAIResponsesItem{Type: "function_call_output", CallID: r.ToolCallID, Output: errorPrefixed(r)}
}

// errorPrefixed is a result's content, prefixed with "Error: " for an error
// result, for formats without an error flag.
func errorPrefixed(r llmtoolkit.Result) string {
	if r.IsError && !strings.HasPrefix(r.Content, "Error: ") {
		return "Error: " + r.Content
	}
	return r.Content
}

// OpenAIResponsesFunctionCall converts a call to a function_call item, to
// replay a conversation, with its item id when the call came with one. A
// malformed call's arguments are replayed as the model sent them. A call
// read from an apply_patch_call or a shell_call is replayed as that item,
// as it came.
func OpenAIResponsesFunctionCall(c llmtoolkit.Call) (OpenAIResponsesItem, error) {
	var native openAIResponsesCallState
	if stateGet(c.Provider, StateOpenAIResponses, &native) && native.Kind != "" {
		return openAIResponsesNativeItem(c, native), nil
	}
	args, err := textArguments("OpenAI Responses", c)
	if err != nil {
		return OpenAIResponsesItem{}, err
	}
	it := OpenAIResponsesItem{Type: "function_call", CallID: c.ID, Name: c.Name, Arguments: args}
	var st openAIResponsesCallState
	if stateGet(c.Provider, StateOpenAIResponses, &st) {
		it.ID = st.ID
	}
	return it, nil
}

// OpenAIResponsesAssistantItems builds the items that replay assistant
// message m. When m carries the response's output items
// ([StateOpenAIResponses]) and they still agree with its text and calls,
// they are written back unchanged: reasoning items (with their
// encrypted_content) before the calls they led to. When m was edited since,
// its reasoning items come first, then the text, then the calls.
func OpenAIResponsesAssistantItems(m agentloop.Message) ([]OpenAIResponsesItem, error) {
	var items []OpenAIResponsesItem
	var st openAIResponsesState
	if stateGet(m.Provider, StateOpenAIResponses, &st) {
		if openAIResponsesMatches(st.Output, m) {
			for _, raw := range st.Output {
				items = append(items, OpenAIResponsesItem{Raw: raw})
			}
			return items, nil
		}
		for _, raw := range st.Output {
			var it openAIResponsesItemIn
			if json.Unmarshal(raw, &it) == nil && it.Type == "reasoning" {
				items = append(items, OpenAIResponsesItem{Type: it.Type, Raw: raw})
			}
		}
	}
	if m.Content != "" {
		items = append(items, OpenAIResponsesItem{Type: "message", Role: "assistant", Content: m.Content})
	}
	for _, c := range m.ToolCalls {
		it, err := OpenAIResponsesFunctionCall(c)
		if err != nil {
			return nil, err
		}
		items = append(items, it)
	}
	return items, nil
}

// openAIResponsesMatches reports whether the output items of a response
// still say what message m says: the same text, and the same calls
// (call_ids and names) in the same order.
func openAIResponsesMatches(raws []json.RawMessage, m agentloop.Message) bool {
	rest, n := m.Content, 0
	for _, raw := range raws {
		var it struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Content []struct {
				Type    string `json:"type"`
				Text    string `json:"text"`
				Refusal string `json:"refusal"`
			} `json:"content"`
		}
		if json.Unmarshal(raw, &it) != nil {
			return false
		}
		switch it.Type {
		case "message":
			for _, c := range it.Content {
				t := c.Text
				if c.Type == "refusal" {
					t = c.Refusal
				} else if c.Type != "output_text" {
					continue
				}
				if !strings.HasPrefix(rest, t) {
					return false
				}
				rest = rest[len(t):]
			}
		case "function_call":
			if !sameCall(m, n, it.CallID, it.Name) {
				return false
			}
			n++
		case itemApplyPatchCall, itemShellCall:
			if !sameCall(m, n, it.CallID, strings.TrimSuffix(it.Type, "_call")) {
				return false
			}
			n++
		}
	}
	return rest == "" && n == len(m.ToolCalls)
}

// OpenAIResponsesInput converts an agentloop conversation to a Responses
// API request's "input": system and user messages as message items,
// assistant messages as [OpenAIResponsesAssistantItems] writes them
// (reasoning items replayed), and each tool message as the item that
// answers its call ([OpenAIResponsesCallOutput]: a function_call_output, or
// the apply_patch_call_output or shell_call_output of a native call). Send the request with
// "store": false and "include": ["reasoning.encrypted_content"] to keep
// reasoning across turns without server-side state.
func OpenAIResponsesInput(history []agentloop.Message) ([]OpenAIResponsesItem, error) {
	out := make([]OpenAIResponsesItem, 0, len(history))
	calls := map[string]llmtoolkit.Call{} // the calls so far, by id
	for i, m := range history {
		switch m.Role {
		case agentloop.RoleSystem, agentloop.RoleUser:
			it := OpenAIResponsesItem{Type: "message", Role: string(m.Role), Content: m.Content}
			if m.Role == agentloop.RoleUser && len(m.Parts) > 0 {
				it.ContentParts = openAIResponsesContents(m.Content, m.Parts)
			}
			out = append(out, it)
		case agentloop.RoleAssistant:
			items, err := OpenAIResponsesAssistantItems(m)
			if err != nil {
				return nil, err
			}
			out = append(out, items...)
			for _, c := range m.ToolCalls {
				calls[c.ID] = c
			}
		case agentloop.RoleTool:
			r := llmtoolkit.Result{ToolCallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError, Parts: m.Parts}
			out = append(out, OpenAIResponsesCallOutput(calls[m.ToolCallID], r))
		default:
			return nil, fmt.Errorf("provider: OpenAI Responses: message %d has unknown role %q", i, m.Role)
		}
	}
	return out, nil
}

// OpenAIResponsesResponse reads a Responses API response body into an
// agentloop.Response: the text of its message items, its function_call
// items as calls, its status as the stop reason (the incomplete_details
// reason for an incomplete response) and the usage. When the output holds
// reasoning or other items, they are all kept in Response.Provider
// ([StateOpenAIResponses]) for [OpenAIResponsesInput] to replay. A failed
// response (its "error" set) is an error.
func OpenAIResponsesResponse(body json.RawMessage) (agentloop.Response, error) {
	resp, turn, err := openAIResponsesRead(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: turn.text, ToolCalls: turn.calls, StopReason: resp.Status, Provider: turn.state, Model: resp.Model}
	if resp.IncompleteDetails != nil && resp.IncompleteDetails.Reason != "" {
		out.StopReason = resp.IncompleteDetails.Reason
	}
	if resp.Usage != nil {
		out.Usage = resp.Usage.usage()
	}
	return out, nil
}
