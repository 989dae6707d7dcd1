package provider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// GeminiCallIDPrefix starts the ids [GeminiToolCalls] makes up for function
// calls that have none (API versions before call ids): "gemini-call-1",
// "gemini-call-2", ... in part order. [GeminiFunctionResponse] does not send
// such ids back.
const GeminiCallIDPrefix = "gemini-call-"

// GeminiTool is one entry of a generateContent request's "tools".
type GeminiTool struct {
	// FunctionDeclarations lists the functions.
	FunctionDeclarations []GeminiFunctionDeclaration `json:"functionDeclarations"`
}

// GeminiFunctionDeclaration declares one function to Gemini.
type GeminiFunctionDeclaration struct {
	// Name is the tool's name.
	Name string `json:"name"`
	// Description tells the model what the tool does.
	Description string `json:"description,omitempty"`
	// Parameters is the schema of the arguments in Gemini's subset (see
	// [GeminiSchema]); omitted for a tool without arguments.
	Parameters map[string]any `json:"parameters,omitempty"`
}

// GeminiContent is one turn of a Gemini conversation.
type GeminiContent struct {
	// Role is "user" or "model" (empty in a systemInstruction).
	Role string `json:"role,omitempty"`
	// Parts are the turn's parts.
	Parts []GeminiPart `json:"parts"`
}

// GeminiPart is one part of a [GeminiContent]: text, a function call or a
// function response, possibly with a thought signature. A part with Raw set
// is written as Raw, unchanged: that is how the parts of a model turn are
// replayed exactly as they came, thought signatures in place.
type GeminiPart struct {
	// Text is a text part's text.
	Text string `json:"text,omitempty"`
	// Thought marks a text part that is a summary of the model's thoughts.
	Thought bool `json:"thought,omitempty"`
	// ThoughtSignature is the opaque signature (base64) the model attached
	// to this part; it must go back on the same part.
	ThoughtSignature string `json:"thoughtSignature,omitempty"`
	// FunctionCall is a model's call.
	FunctionCall *GeminiFunctionCall `json:"functionCall,omitempty"`
	// FunctionResponse answers a call.
	FunctionResponse *GeminiFunctionResult `json:"functionResponse,omitempty"`
	// InlineData is an image's or a document's bytes (a user turn's part).
	InlineData *GeminiBlob `json:"inlineData,omitempty"`
	// FileData points at a file (a user turn's part).
	FileData *GeminiFileData `json:"fileData,omitempty"`
	// Raw, when set, is the whole part as the API sent it; it is written
	// instead of the fields above.
	Raw json.RawMessage `json:"-"`
}

// MarshalJSON writes Raw when set, else the part's fields.
func (p GeminiPart) MarshalJSON() ([]byte, error) {
	if len(p.Raw) > 0 {
		return p.Raw, nil
	}
	if p.carriesBytes() {
		return geminiMediaObject(p).marshal()
	}
	type plain GeminiPart
	return json.Marshal(plain(p))
}

// GeminiFunctionCall is a "functionCall" part.
type GeminiFunctionCall struct {
	// ID is the call's id, when the API gives one.
	ID string `json:"id,omitempty"`
	// Name is the function's name.
	Name string `json:"name"`
	// Args are the arguments.
	Args map[string]any `json:"args"`
}

// GeminiFunctionResult is a "functionResponse" part's value.
type GeminiFunctionResult struct {
	// ID is the id of the call it answers, when the call had one.
	ID string `json:"id,omitempty"`
	// Name is the function's name.
	Name string `json:"name"`
	// Response holds {"output": content} or, for a failure, {"error": content}.
	Response map[string]any `json:"response"`
	// Parts are the images and documents of the result (Gemini 3 models:
	// see [GeminiPartsPlacement]).
	Parts []GeminiFunctionResponsePart `json:"parts,omitempty"`
}

// GeminiTools converts tools to a generateContent request's "tools": one
// entry holding every function declaration, with parameters converted by
// [GeminiSchema]. No tools give nil.
func GeminiTools(tools []llmtoolkit.Tool) []GeminiTool {
	if len(tools) == 0 {
		return nil
	}
	decls := make([]GeminiFunctionDeclaration, len(tools))
	for i, t := range tools {
		d := GeminiFunctionDeclaration{Name: t.Name, Description: t.Description}
		if t.Parameters != nil {
			params := GeminiSchema(t.Parameters)
			if props, ok := params["properties"].(map[string]any); ok && len(props) > 0 {
				d.Parameters = params
			}
		}
		decls[i] = d
	}
	return []GeminiTool{{FunctionDeclarations: decls}}
}

type geminiPartIn struct {
	Text             *string `json:"text"`
	Thought          bool    `json:"thought"`
	ThoughtSignature string  `json:"thoughtSignature"`
	FunctionCall     *struct {
		ID   string          `json:"id"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args"`
	} `json:"functionCall"`
}

type geminiResponse struct {
	Candidates []struct {
		Content      json.RawMessage `json:"content"`
		FinishReason string          `json:"finishReason"`
	} `json:"candidates"`
	PromptFeedback *struct {
		BlockReason string `json:"blockReason"`
	} `json:"promptFeedback"`
	UsageMetadata *geminiUsage `json:"usageMetadata"`
	ModelVersion  string       `json:"modelVersion"`
	// Parts is set when the payload is a Content rather than a response.
	Parts json.RawMessage `json:"parts"`
}

// geminiState is the value of [StateGemini] on an assistant message.
type geminiState struct {
	Parts []json.RawMessage `json:"parts"`
}

// geminiCallState is the value of [StateGemini] on a call.
type geminiCallState struct {
	ThoughtSignature string `json:"thoughtSignature"`
}

// geminiTurn is what one model turn holds.
type geminiTurn struct {
	text  string
	calls []llmtoolkit.Call
	state llmtoolkit.ProviderState // nil unless the parts need replaying
}

// GeminiToolCalls reads the functionCall parts of a model turn, given the
// whole generateContent response (its first candidate), the Content
// ({"role": "model", "parts": [...]}) or its parts array. A call keeps the
// id the API gave it, or gets one made up from [GeminiCallIDPrefix] and its
// position; a call's thoughtSignature is kept in its Provider state
// ([StateGemini]). Args that are not an object give a
// [llmtoolkit.MalformedCall].
func GeminiToolCalls(content json.RawMessage) ([]llmtoolkit.Call, error) {
	_, turn, err := geminiRead(content)
	return turn.calls, err
}

func geminiRead(raw json.RawMessage) (geminiResponse, geminiTurn, error) {
	var resp geminiResponse
	parts := raw
	if !isArray(raw) {
		if err := decode("Gemini", raw, &resp); err != nil {
			return resp, geminiTurn{}, err
		}
		switch {
		case resp.Candidates != nil:
			if len(resp.Candidates) == 0 {
				reason := "no reason given"
				if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" {
					reason = "blockReason " + resp.PromptFeedback.BlockReason
				}
				return resp, geminiTurn{}, fmt.Errorf("%w: Gemini: the response has no candidates (%s)", ErrInvalidPayload, reason)
			}
			var c struct {
				Parts json.RawMessage `json:"parts"`
			}
			if len(resp.Candidates[0].Content) > 0 {
				if err := decode("Gemini", resp.Candidates[0].Content, &c); err != nil {
					return resp, geminiTurn{}, err
				}
			}
			parts = c.Parts
		case resp.Parts != nil:
			parts = resp.Parts
		default:
			return resp, geminiTurn{}, fmt.Errorf("%w: Gemini: expected a response with \"candidates\", a content with \"parts\", or a parts array", ErrInvalidPayload)
		}
	}
	var raws []json.RawMessage
	if len(parts) > 0 && string(bytes.TrimSpace(parts)) != "null" {
		if err := decode("Gemini", parts, &raws); err != nil {
			return resp, geminiTurn{}, err
		}
	}
	turn, err := geminiParts(raws)
	return resp, turn, err
}

// geminiParts reads a model turn from its parts. The parts are kept as
// state when any of them carries a thought or a thought signature, or is
// more than text and function calls, so that the turn can be replayed
// exactly.
func geminiParts(raws []json.RawMessage) (geminiTurn, error) {
	var turn geminiTurn
	var text []string
	keep := false
	for i, raw := range raws {
		var p geminiPartIn
		if err := decode("Gemini", raw, &p); err != nil {
			return geminiTurn{}, fmt.Errorf("parts[%d]: %w", i, err)
		}
		if p.ThoughtSignature != "" || p.Thought {
			keep = true
		}
		switch {
		case p.FunctionCall != nil:
			fc := p.FunctionCall
			if fc.Name == "" {
				return geminiTurn{}, fmt.Errorf("%w: Gemini: parts[%d] is a functionCall without a name", ErrInvalidPayload, i)
			}
			call := objectCall("Gemini", fc.ID, fc.Name, fc.Args) // an empty id is made up below
			if p.ThoughtSignature != "" {
				call.Provider = stateWith(nil, StateGemini, geminiCallState{ThoughtSignature: p.ThoughtSignature})
			}
			turn.calls = append(turn.calls, call)
		case p.Thought:
		case p.Text != nil:
			text = append(text, *p.Text)
		default:
			keep = true // inline data, executable code, ...
		}
	}
	turn.text = strings.Join(text, "")
	distinctCallIDs(turn.calls, GeminiCallIDPrefix)
	if keep {
		turn.state = stateWith(nil, StateGemini, geminiState{Parts: raws})
	}
	return turn, nil
}

// GeminiFunctionResponse converts a result to the functionResponse part
// that answers the call: {"output": content}, or {"error": content} for a
// failure, as Gemini's documentation recommends. The call's id is echoed
// unless [GeminiToolCalls] made it up.
//
// A result's parts go in the functionResponse's "parts" (Gemini 3): images
// and documents as inlineData, text parts and notes for parts Gemini does
// not take in the output text.
func GeminiFunctionResponse(r llmtoolkit.Result) GeminiPart {
	if len(r.Parts) > 0 {
		part, _ := geminiResponseWithParts(r, GeminiPartsInResponse)
		return part
	}
	key := "output"
	if r.IsError {
		key = "error"
	}
	return GeminiPart{FunctionResponse: &GeminiFunctionResult{
		ID: realGeminiID(r.ToolCallID), Name: r.Name, Response: map[string]any{key: r.Content},
	}}
}

// GeminiFunctionCallPart converts a call to a functionCall part, to replay
// a conversation, with the thoughtSignature the call came with
// ([StateGemini] in its Provider state). A malformed call's args are {}.
func GeminiFunctionCallPart(c llmtoolkit.Call) GeminiPart {
	args := c.Arguments
	if args == nil || c.Malformed != nil {
		args = map[string]any{}
	}
	part := GeminiPart{FunctionCall: &GeminiFunctionCall{ID: realGeminiID(c.ID), Name: c.Name, Args: args}}
	var st geminiCallState
	if stateGet(c.Provider, StateGemini, &st) {
		part.ThoughtSignature = st.ThoughtSignature
	}
	return part
}

func realGeminiID(id string) string {
	if strings.HasPrefix(id, GeminiCallIDPrefix) {
		return ""
	}
	return id
}

// GeminiModelContent builds the "model" content that replays m. When m
// carries the turn's parts ([StateGemini]) and they still agree with its
// text and calls, they are written back unchanged, with every thought
// signature on the part it came on. Otherwise the text comes first, then
// the calls, each with its own signature. A message with nothing to send
// gives ok false: leave it out (the API refuses an empty part).
func GeminiModelContent(m agentloop.Message) (content GeminiContent, ok bool) {
	content = GeminiContent{Role: "model"}
	var st geminiState
	if stateGet(m.Provider, StateGemini, &st) {
		if geminiMatches(st.Parts, m) {
			for _, raw := range st.Parts {
				content.Parts = append(content.Parts, GeminiPart{Raw: raw})
			}
			return content, len(content.Parts) > 0
		}
	}
	if m.Content != "" {
		content.Parts = append(content.Parts, GeminiPart{Text: m.Content})
	}
	for _, call := range m.ToolCalls {
		content.Parts = append(content.Parts, GeminiFunctionCallPart(call))
	}
	return content, len(content.Parts) > 0
}

// geminiMatches reports whether the parts of a model turn still say what
// message m says: the same text (thoughts aside), and the same calls (ids
// and names) in the same order.
func geminiMatches(raws []json.RawMessage, m agentloop.Message) bool {
	rest, n := m.Content, 0
	for _, raw := range raws {
		var p struct {
			Text         *string `json:"text"`
			Thought      bool    `json:"thought"`
			FunctionCall *struct {
				ID   string `json:"id"`
				Name string `json:"name"`
			} `json:"functionCall"`
		}
		if json.Unmarshal(raw, &p) != nil {
			return false
		}
		switch {
		case p.FunctionCall != nil:
			id := p.FunctionCall.ID
			if id == "" {
				id = fmt.Sprintf("%s%d", GeminiCallIDPrefix, n+1)
			}
			if !sameCall(m, n, id, p.FunctionCall.Name) {
				return false
			}
			n++
		case p.Thought:
		case p.Text != nil:
			if !strings.HasPrefix(rest, *p.Text) {
				return false
			}
			rest = rest[len(*p.Text):]
		}
	}
	return rest == "" && n == len(m.ToolCalls)
}

// GeminiContents converts an agentloop conversation to a generateContent
// request's "systemInstruction" (nil without system messages) and
// "contents": assistant turns have role "model" (written by
// [GeminiModelContent]: thought signatures replayed, an empty turn left
// out), and the tool messages that follow one are grouped in one "user"
// turn of functionResponse parts. Consecutive user turns of the same kind
// (text, or function responses) are merged into one.
//
// A tool result's parts go in its functionResponse (Gemini 3); use
// [GeminiContentsPlaced] with [GeminiPartsAfterResponses] for older models.
// A user message's parts follow its text ([GeminiUserParts]).
func GeminiContents(history []agentloop.Message) (system *GeminiContent, contents []GeminiContent, err error) {
	return GeminiContentsPlaced(history, GeminiPartsInResponse)
}

// GeminiContentsPlaced is [GeminiContents] with the tool results' parts
// placed as placement says.
func GeminiContentsPlaced(history []agentloop.Message, placement GeminiPartsPlacement) (system *GeminiContent, contents []GeminiContent, err error) {
	responses := func(c GeminiContent) bool { return len(c.Parts) > 0 && c.Parts[0].FunctionResponse != nil }
	add := func(c GeminiContent) {
		if n := len(contents); n > 0 && contents[n-1].Role == c.Role && responses(contents[n-1]) == responses(c) {
			contents[n-1].Parts = append(contents[n-1].Parts, c.Parts...)
			return
		}
		contents = append(contents, c)
	}
	var after []GeminiPart // parts to send after the turn's function responses
	flush := func() {
		if n := len(contents); n > 0 && len(after) > 0 {
			contents[n-1].Parts = append(contents[n-1].Parts, after...)
		}
		after = nil
	}
	defer flush()
	for i, m := range history {
		if m.Role != agentloop.RoleTool {
			flush()
		}
		switch m.Role {
		case agentloop.RoleSystem:
			if system == nil {
				system = &GeminiContent{}
			}
			system.Parts = append(system.Parts, GeminiPart{Text: m.Content})
		case agentloop.RoleUser:
			parts := []GeminiPart{{Text: m.Content}}
			if len(m.Parts) > 0 {
				parts = GeminiUserParts(append([]llmtoolkit.Part{llmtoolkit.TextPart(m.Content)}, m.Parts...))
			}
			add(GeminiContent{Role: "user", Parts: parts})
		case agentloop.RoleAssistant:
			if c, ok := GeminiModelContent(m); ok {
				add(c)
			}
		case agentloop.RoleTool:
			res := llmtoolkit.Result{ToolCallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError, Parts: m.Parts}
			part, more := geminiResponseWithParts(res, placement)
			add(GeminiContent{Role: "user", Parts: []GeminiPart{part}})
			after = append(after, more...)
		default:
			return nil, nil, fmt.Errorf("provider: Gemini: message %d has unknown role %q", i, m.Role)
		}
	}
	return system, contents, nil
}

// GeminiResponse reads a generateContent response body into an
// agentloop.Response: the first candidate's text (thoughts left out) and
// function calls, its finishReason and the usage (thought tokens counted
// as output). When the turn carries thoughts or thought signatures, its
// parts are kept in Response.Provider ([StateGemini]) for [GeminiContents]
// to replay.
func GeminiResponse(body json.RawMessage) (agentloop.Response, error) {
	resp, turn, err := geminiRead(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: turn.text, ToolCalls: turn.calls, Provider: turn.state, Model: resp.ModelVersion}
	if len(resp.Candidates) > 0 {
		out.StopReason = resp.Candidates[0].FinishReason
	}
	if u := resp.UsageMetadata; u != nil {
		out.Usage = u.usage()
	}
	return out, nil
}
