package llmtoolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Call is one tool call made by a model.
type Call struct {
	// ID is the provider's id for the call, echoed in the result. It is
	// distinct among the calls of one answer, and the same on every
	// attempt of a call under a durable engine (agentloop.Executor), which
	// runs again a call whose process died: with the run and the
	// iteration it makes the call's idempotency key ([IdempotencyKey]).
	ID string `json:"id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Arguments are the decoded arguments: always a map, never a JSON string.
	Arguments map[string]any `json:"arguments"`
	// Malformed, when set, says that the model's arguments could not be
	// read (they were not a JSON object); Arguments is then empty. [Execute]
	// does not run such a call: it answers with an error result that quotes
	// the problem, so that the model can send the call again. See
	// [MalformedCall].
	Malformed *Malformed `json:"malformed,omitempty"`
	// Provider is state the model's provider attached to this one call
	// (a Gemini thoughtSignature, say) that must go back to the same
	// provider with the call, unchanged. It is opaque outside package
	// provider; see [ProviderState].
	Provider ProviderState `json:"provider,omitempty"`
}

// Malformed describes arguments a model sent that are not a JSON object.
type Malformed struct {
	// Raw is the arguments text exactly as the model sent it. Provider
	// converters replay it where the wire format carries arguments as text.
	Raw string `json:"raw"`
	// Reason says what is wrong with it (the parse error).
	Reason string `json:"reason"`
}

// ProviderState is provider-opaque state that travels with a conversation:
// what a model provider returned beside the text and the calls (reasoning
// blocks, thought signatures, reasoning items) and needs back, unchanged,
// when the conversation is sent to it again. Each key names one wire format
// ("anthropic", "gemini", "openai-responses"); only that format's
// converters in package provider read or write its value, and the others
// ignore it, so a conversation can move between providers without leaking
// one provider's state into another's request. Hosts store it with the
// conversation (it has a JSON form) and otherwise leave it alone.
type ProviderState map[string]json.RawMessage

// MalformedCall builds the call for arguments that could not be decoded:
// empty Arguments, and [Call.Malformed] keeping the raw text and err's
// message. Provider parsers use it so that a malformed call goes back to
// the model as an error result instead of failing the model call.
func MalformedCall(id, name, raw string, err error) Call {
	reason := "the arguments are not a JSON object"
	if err != nil {
		reason = err.Error()
	}
	return Call{ID: id, Name: name, Arguments: map[string]any{}, Malformed: &Malformed{Raw: raw, Reason: reason}}
}

// ParseCallLenient is [ParseCall] for provider parsers: arguments that
// cannot be decoded give a [MalformedCall] instead of an error.
func ParseCallLenient(id, name, argumentsJSON string) Call {
	call, err := ParseCall(id, name, argumentsJSON)
	if err != nil {
		return MalformedCall(id, name, argumentsJSON, err)
	}
	return call
}

// maxQuotedArguments caps how much of malformed arguments an error result
// quotes back to the model.
const maxQuotedArguments = 2000

// malformedError is the error of a call whose arguments were malformed;
// its text is what the model is told.
func malformedError(call Call) error {
	raw := call.Malformed.Raw
	if len(raw) > maxQuotedArguments {
		cut := maxQuotedArguments
		for cut > 0 && !utf8.RuneStart(raw[cut]) {
			cut--
		}
		raw = raw[:cut] + fmt.Sprintf("… (%d bytes in all)", len(call.Malformed.Raw))
	}
	reason := strings.TrimPrefix(call.Malformed.Reason, ErrInvalidCall.Error()+" "+strconv.Quote(call.Name)+": ")
	return fmt.Errorf("%w: the call to %q was not run: %s. The arguments received were: %q. Send the call again with the arguments as one JSON object that matches the tool's schema",
		ErrInvalidCall, call.Name, reason, raw)
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
