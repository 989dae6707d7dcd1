package llmtoolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Call is one tool call made by a model.
type Call struct {
	// ID is the provider's id for the call, echoed in the result.
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments are the decoded arguments: always a map, never a JSON string.
	Arguments map[string]any `json:"arguments"`
}

// ErrInvalidCall is wrapped by the errors of [ParseCall].
var ErrInvalidCall = errors.New("invalid tool call")

// ParseCall builds a Call from a provider's JSON arguments string, as OpenAI
// sends it. "" and "null" mean no arguments ({}). Invalid JSON is an error
// that says where it broke; a JSON value that is not an object is an error
// that says what it was.
func ParseCall(id, name, argumentsJSON string) (Call, error) {
	call := Call{ID: id, Name: name}
	trimmed := bytes.TrimSpace([]byte(argumentsJSON))
	if len(trimmed) == 0 || string(trimmed) == "null" {
		call.Arguments = map[string]any{}
		return call, nil
	}
	var v any
	if err := json.Unmarshal(trimmed, &v); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return Call{}, fmt.Errorf("%w %q: arguments are not valid JSON at byte %d (near %q): %w",
				ErrInvalidCall, name, se.Offset, near(trimmed, se.Offset), err)
		}
		return Call{}, fmt.Errorf("%w %q: arguments are not valid JSON: %w", ErrInvalidCall, name, err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return Call{}, fmt.Errorf("%w %q: arguments must be a JSON object, got %s", ErrInvalidCall, name, jsonTypeName(v))
	}
	call.Arguments = m
	return call, nil
}

// near returns a short excerpt of data around offset, for error messages.
func near(data []byte, offset int64) string {
	start := max(int(offset)-10, 0)
	end := min(int(offset)+10, len(data))
	start = min(start, end)
	return string(data[start:end])
}
