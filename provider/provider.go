package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrInvalidPayload is wrapped by the errors of the functions that read a
// provider's JSON: the payload is not shaped as the provider documents.
var ErrInvalidPayload = errors.New("provider: invalid payload")

// GeneratedCallIDPrefix starts the id the parsers make up for a call the
// answer gave none (OpenAI Chat Completions, OpenAI Responses, Anthropic;
// Gemini's start with [GeminiCallIDPrefix]).
const GeneratedCallIDPrefix = "llmtoolkit-call-"

// distinctCallIDs gives every call of one answer an id of its own, the one
// rule of every parser (responses and streams, all four formats), so that
// each result pairs with exactly one call: a call without an id gets
// prefix and its position (1-based); a call whose id an earlier call of
// the answer already has gets "-2", "-3", ... appended (the first keeps
// it). Nothing is refused: the model reads each call's own result.
func distinctCallIDs(calls []llmtoolkit.Call, prefix string) {
	seen := make(map[string]bool, len(calls))
	next := map[string]int{} // the next suffix to try, per repeated id
	for i := range calls {
		id := calls[i].ID
		if id == "" {
			id = prefix + strconv.Itoa(i+1)
		}
		if seen[id] {
			base := id
			n := max(next[base], 2)
			for id = base + "-" + strconv.Itoa(n); seen[id]; id = base + "-" + strconv.Itoa(n) {
				n++
			}
			next[base] = n + 1
		}
		seen[id] = true
		calls[i].ID = id
	}
}

// objectCall builds the call for arguments given as a JSON value (an
// Anthropic input, Gemini args): null and absent mean {}; a value that is
// not an object gives a [llmtoolkit.MalformedCall], which goes back to the
// model as an error result.
func objectCall(provider, id, name string, raw json.RawMessage) llmtoolkit.Call {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return llmtoolkit.Call{ID: id, Name: name, Arguments: map[string]any{}}
	}
	var m map[string]any
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return malformedObjectCall(provider, id, name, string(trimmed))
	}
	if m == nil {
		m = map[string]any{}
	}
	return llmtoolkit.Call{ID: id, Name: name, Arguments: m}
}

// isArray reports whether raw is a JSON array.
func isArray(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '['
}

func decode(provider string, raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 {
		return fmt.Errorf("%w: %s: the payload is empty", ErrInvalidPayload, provider)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrInvalidPayload, provider, err)
	}
	return nil
}

// The keys of [llmtoolkit.ProviderState] that this package reads and
// writes, one per wire format. A converter reads only its own key, so state
// never leaks into another provider's request.
const (
	// StateAnthropic holds, on an assistant message, the answer's content
	// blocks ({"content": [...]}) when they include thinking or other
	// blocks beyond text and tool_use.
	StateAnthropic = "anthropic"
	// StateGemini holds, on an assistant message, the model turn's parts
	// ({"parts": [...]}) when they carry thoughts or thought signatures;
	// on a call, the thoughtSignature of its functionCall part
	// ({"thoughtSignature": "..."}).
	StateGemini = "gemini"
	// StateOpenAIResponses holds, on an assistant message, the response's
	// output items ({"output": [...]}) when they include reasoning or other
	// items beyond messages and function calls; on a call, the id of its
	// function_call item ({"id": "fc_..."}).
	StateOpenAIResponses = "openai-responses"
)

// stateGet decodes the value of key in s into v; it reports false when s
// has no such key or the value does not decode (state written by another
// version, or edited: then the converter does without it).
func stateGet(s llmtoolkit.ProviderState, key string, v any) bool {
	raw, ok := s[key]
	if !ok || len(raw) == 0 {
		return false
	}
	return json.Unmarshal(raw, v) == nil
}

// stateWith returns s with key set to the encoding of v, s itself is not
// modified.
func stateWith(s llmtoolkit.ProviderState, key string, v any) llmtoolkit.ProviderState {
	data, err := json.Marshal(v)
	if err != nil {
		return s // v is built from decoded JSON: it always encodes
	}
	out := make(llmtoolkit.ProviderState, len(s)+1)
	maps.Copy(out, s)
	out[key] = data
	return out
}

// callArguments returns the arguments of c to write in a request as a JSON
// object: the map encoded ({} for none). A malformed call's arguments are {}
// (formats that carry arguments as text replay the raw text instead).
func callArguments(provider string, c llmtoolkit.Call) (json.RawMessage, error) {
	if c.Malformed != nil || len(c.Arguments) == 0 {
		return json.RawMessage(`{}`), nil
	}
	data, err := json.Marshal(c.Arguments)
	if err != nil {
		return nil, fmt.Errorf("provider: %s: arguments of call %q (%s) cannot be encoded: %w", provider, c.ID, c.Name, err)
	}
	return data, nil
}

// malformedObjectCall is the call for arguments raw that are not a JSON
// object.
func malformedObjectCall(provider, id, name, raw string) llmtoolkit.Call {
	var m map[string]any
	err := json.Unmarshal([]byte(raw), &m)
	if err == nil {
		err = errors.New("null")
	}
	return llmtoolkit.MalformedCall(id, name, raw, fmt.Errorf("%s tool call %q: arguments must be a JSON object: %w", provider, name, err))
}
