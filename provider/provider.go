package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// ErrInvalidPayload is wrapped by the errors of the functions that read a
// provider's JSON: the payload is not shaped as the provider documents.
var ErrInvalidPayload = errors.New("provider: invalid payload")

// argumentsMap turns a decoded JSON value (an Anthropic input, Gemini args)
// into a call's arguments: null and absent mean {}.
func argumentsMap(provider, name string, raw json.RawMessage) (map[string]any, error) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(trimmed, &m); err != nil {
		return nil, fmt.Errorf("%w: %s tool call %q: arguments must be a JSON object: %w", ErrInvalidPayload, provider, name, err)
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
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
