package provider

import (
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
// function response.
type GeminiPart struct {
	// Text is a text part's text.
	Text string `json:"text,omitempty"`
	// FunctionCall is a model's call.
	FunctionCall *GeminiFunctionCall `json:"functionCall,omitempty"`
	// FunctionResponse answers a call.
	FunctionResponse *GeminiFunctionResult `json:"functionResponse,omitempty"`
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
	Text         string `json:"text"`
	Thought      bool   `json:"thought"`
	FunctionCall *struct {
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
	UsageMetadata *struct {
		PromptTokenCount     int `json:"promptTokenCount"`
		CandidatesTokenCount int `json:"candidatesTokenCount"`
	} `json:"usageMetadata"`
	// Parts is set when the payload is a Content rather than a response.
	Parts json.RawMessage `json:"parts"`
}

// GeminiToolCalls reads the functionCall parts of a model turn, given the
// whole generateContent response (its first candidate), the Content
// ({"role": "model", "parts": [...]}) or its parts array. A call without an
// id gets one made up from [GeminiCallIDPrefix] and its position.
func GeminiToolCalls(content json.RawMessage) ([]llmtoolkit.Call, error) {
	_, calls, _, err := geminiRead(content)
	return calls, err
}

func geminiRead(raw json.RawMessage) (geminiResponse, []llmtoolkit.Call, string, error) {
	var resp geminiResponse
	parts := raw
	if !isArray(raw) {
		if err := decode("Gemini", raw, &resp); err != nil {
			return resp, nil, "", err
		}
		switch {
		case resp.Candidates != nil:
			if len(resp.Candidates) == 0 {
				reason := "no reason given"
				if resp.PromptFeedback != nil && resp.PromptFeedback.BlockReason != "" {
					reason = "blockReason " + resp.PromptFeedback.BlockReason
				}
				return resp, nil, "", fmt.Errorf("%w: Gemini: the response has no candidates (%s)", ErrInvalidPayload, reason)
			}
			var c struct {
				Parts json.RawMessage `json:"parts"`
			}
			if len(resp.Candidates[0].Content) > 0 {
				if err := decode("Gemini", resp.Candidates[0].Content, &c); err != nil {
					return resp, nil, "", err
				}
			}
			parts = c.Parts
		case resp.Parts != nil:
			parts = resp.Parts
		default:
			return resp, nil, "", fmt.Errorf("%w: Gemini: expected a response with \"candidates\", a content with \"parts\", or a parts array", ErrInvalidPayload)
		}
	}
	var ps []geminiPartIn
	if len(parts) > 0 {
		if err := decode("Gemini", parts, &ps); err != nil {
			return resp, nil, "", err
		}
	}
	var calls []llmtoolkit.Call
	var text []string
	n := 0
	for i, p := range ps {
		switch {
		case p.FunctionCall != nil:
			n++
			fc := p.FunctionCall
			if fc.Name == "" {
				return resp, nil, "", fmt.Errorf("%w: Gemini: parts[%d] is a functionCall without a name", ErrInvalidPayload, i)
			}
			args, err := argumentsMap("Gemini", fc.Name, fc.Args)
			if err != nil {
				return resp, nil, "", err
			}
			id := fc.ID
			if id == "" {
				id = fmt.Sprintf("%s%d", GeminiCallIDPrefix, n)
			}
			calls = append(calls, llmtoolkit.Call{ID: id, Name: fc.Name, Arguments: args})
		case p.Thought:
		default:
			text = append(text, p.Text)
		}
	}
	return resp, calls, strings.Join(text, ""), nil
}

// GeminiFunctionResponse converts a result to the functionResponse part
// that answers the call: {"output": content}, or {"error": content} for a
// failure, as Gemini's documentation recommends. The call's id is echoed
// unless [GeminiToolCalls] made it up.
func GeminiFunctionResponse(r llmtoolkit.Result) GeminiPart {
	key := "output"
	if r.IsError {
		key = "error"
	}
	return GeminiPart{FunctionResponse: &GeminiFunctionResult{
		ID: realGeminiID(r.ToolCallID), Name: r.Name, Response: map[string]any{key: r.Content},
	}}
}

// GeminiFunctionCallPart converts a call to a functionCall part, to replay
// a conversation.
func GeminiFunctionCallPart(c llmtoolkit.Call) GeminiPart {
	args := c.Arguments
	if args == nil {
		args = map[string]any{}
	}
	return GeminiPart{FunctionCall: &GeminiFunctionCall{ID: realGeminiID(c.ID), Name: c.Name, Args: args}}
}

func realGeminiID(id string) string {
	if strings.HasPrefix(id, GeminiCallIDPrefix) {
		return ""
	}
	return id
}

// GeminiContents converts an agentloop conversation to a generateContent
// request's "systemInstruction" (nil without system messages) and
// "contents": assistant turns have role "model", and the tool messages that
// follow one are grouped in one "user" turn of functionResponse parts.
func GeminiContents(history []agentloop.Message) (system *GeminiContent, contents []GeminiContent, err error) {
	for i, m := range history {
		switch m.Role {
		case agentloop.RoleSystem:
			if system == nil {
				system = &GeminiContent{}
			}
			system.Parts = append(system.Parts, GeminiPart{Text: m.Content})
		case agentloop.RoleUser:
			contents = append(contents, GeminiContent{Role: "user", Parts: []GeminiPart{{Text: m.Content}}})
		case agentloop.RoleAssistant:
			c := GeminiContent{Role: "model"}
			if m.Content != "" || len(m.ToolCalls) == 0 {
				c.Parts = append(c.Parts, GeminiPart{Text: m.Content})
			}
			for _, call := range m.ToolCalls {
				c.Parts = append(c.Parts, GeminiFunctionCallPart(call))
			}
			contents = append(contents, c)
		case agentloop.RoleTool:
			part := GeminiFunctionResponse(llmtoolkit.Result{ToolCallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError})
			if n := len(contents); n > 0 && contents[n-1].Role == "user" && len(contents[n-1].Parts) > 0 &&
				contents[n-1].Parts[0].FunctionResponse != nil {
				contents[n-1].Parts = append(contents[n-1].Parts, part)
			} else {
				contents = append(contents, GeminiContent{Role: "user", Parts: []GeminiPart{part}})
			}
		default:
			return nil, nil, fmt.Errorf("provider: Gemini: message %d has unknown role %q", i, m.Role)
		}
	}
	return system, contents, nil
}

// GeminiResponse reads a generateContent response body into an
// agentloop.Response: the first candidate's text (thoughts left out) and
// function calls, its finishReason and the usage.
func GeminiResponse(body json.RawMessage) (agentloop.Response, error) {
	resp, calls, text, err := geminiRead(body)
	if err != nil {
		return agentloop.Response{}, err
	}
	out := agentloop.Response{Content: text, ToolCalls: calls}
	if len(resp.Candidates) > 0 {
		out.StopReason = resp.Candidates[0].FinishReason
	}
	if resp.UsageMetadata != nil {
		out.Usage = agentloop.Usage{InputTokens: resp.UsageMetadata.PromptTokenCount, OutputTokens: resp.UsageMetadata.CandidatesTokenCount}
	}
	return out, nil
}
