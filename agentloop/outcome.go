package agentloop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit"
)

// The outcomes of the steps an [Executor] runs, in a form a
// durable-execution engine can store: plain structs that survive a JSON
// round trip (and gob, through their JSON form) with their meaning.

// ToolOutcome is the stored form of one tool call's [llmtoolkit.Result]
// (whose Err does not encode to JSON by itself): build it with
// [EncodeResult], restore the Result with [ToolOutcome.Result].
type ToolOutcome struct {
	// ToolCallID is [llmtoolkit.Result.ToolCallID].
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Content is what the model sees, when it is valid UTF-8.
	Content string `json:"content"`
	// ContentBytes holds the content instead, exactly, when it is not
	// valid UTF-8 (which a JSON string cannot carry).
	ContentBytes []byte `json:"content_bytes,omitempty"`
	// IsError marks a failed call.
	IsError bool `json:"is_error,omitempty"`
	// Display is the payload the tool showed, if any.
	Display *DisplayOutcome `json:"display,omitempty"`
	// Parts are the result's parts ([llmtoolkit.Result.Parts]) as they
	// are: an image's or a document's bytes in full (base64 in the JSON),
	// so a durable store holds every image a tool returned (as it holds
	// the text), bounded by the run's MaxTurnResultBytes.
	Parts []llmtoolkit.Part `json:"parts,omitempty"`
	// Err is the error behind IsError, by kind.
	Err *ErrorOutcome `json:"error,omitempty"`
}

// DisplayOutcome is the stored form of an [llmtoolkit.Display]: its kind
// and its payload as JSON. Restored, the payload is generic JSON (a
// map[string]any for an object), as for a Display read from an MCP server.
type DisplayOutcome struct {
	// Kind is [llmtoolkit.Display.Kind].
	Kind string `json:"kind"`
	// Payload is the payload encoded as JSON; null when it could not be
	// (PayloadError then says why).
	Payload json.RawMessage `json:"payload,omitempty"`
	// PayloadError says why the payload could not be encoded, if it could
	// not.
	PayloadError string `json:"payload_error,omitempty"`
}

// ModelOutcome is the stored form of one model call's outcome: the
// [Response] or the error. Build it with [EncodeModel], restore it with
// [ModelOutcome.Unpack].
type ModelOutcome struct {
	// Response is the response as JSON, when the call succeeded.
	Response json.RawMessage `json:"response,omitempty"`
	// Err is the call's error, by kind, when it failed.
	Err *ErrorOutcome `json:"error,omitempty"`
}

// ErrorOutcome is the stored form of an error: its message and what
// errors.Is and errors.As hold for. Build it with [EncodeError], restore
// the error (a [*RecordedError]) with [ErrorOutcome.Unpack].
//
// Kinds names the sentinels the error wraps, among every sentinel of
// package llmtoolkit (ErrHalt, ErrDenied, ErrLimitReached, ErrUnknownTool,
// ErrInvalidArguments, ErrInvalidCall, ErrInvalidTool, ErrToolPanic,
// ErrSchemaTooComplex), of this package (ErrTooManyCalls, ErrMaxIterations,
// ErrCircuitBreaker, ErrHalted, ErrInvalidOptions, ErrModelPanic,
// ErrCallbackPanic, ErrExecutor) and context.Canceled and
// context.DeadlineExceeded, as "llmtoolkit.ErrHalt",
// "agentloop.ErrTooManyCalls", "context.Canceled" and so on; and the error
// types whose fields it keeps: "llmtoolkit.HaltError" (HaltReason),
// "llmtoolkit.DeniedError" (DeniedTool, DeniedReason),
// "llmtoolkit.PanicError" and "agentloop.ModelPanicError" (PanicValue, as
// text; the stack is not kept). Other errors keep their message only. The
// message is kept exactly; the other texts are kept as JSON strings keep
// them (bytes that are not UTF-8 become U+FFFD).
type ErrorOutcome struct {
	// Message is the error's message, when it is valid UTF-8.
	Message string `json:"message"`
	// MessageBytes holds the message instead, exactly, when it is not.
	MessageBytes []byte `json:"message_bytes,omitempty"`
	// Kinds names the sentinels and types the error wraps (see above).
	Kinds []string `json:"kinds,omitempty"`
	// HaltReason is the Reason of the [*llmtoolkit.HaltError] it wraps.
	HaltReason string `json:"halt_reason,omitempty"`
	// DeniedTool is the Tool of the [*llmtoolkit.DeniedError] it wraps.
	DeniedTool string `json:"denied_tool,omitempty"`
	// DeniedReason is the Reason of the [*llmtoolkit.DeniedError] it wraps.
	DeniedReason string `json:"denied_reason,omitempty"`
	// PanicValue is the panic value, as text, of the
	// [*llmtoolkit.PanicError] or [*ModelPanicError] it wraps.
	PanicValue string `json:"panic_value,omitempty"`
}

// errorKinds are the sentinels an ErrorOutcome keeps, by name.
var errorKinds = [...]struct {
	name string
	err  error
}{
	{"llmtoolkit.ErrHalt", llmtoolkit.ErrHalt},
	{"llmtoolkit.ErrDenied", llmtoolkit.ErrDenied},
	{"llmtoolkit.ErrLimitReached", llmtoolkit.ErrLimitReached},
	{"llmtoolkit.ErrUnknownTool", llmtoolkit.ErrUnknownTool},
	{"llmtoolkit.ErrInvalidArguments", llmtoolkit.ErrInvalidArguments},
	{"llmtoolkit.ErrInvalidCall", llmtoolkit.ErrInvalidCall},
	{"llmtoolkit.ErrInvalidTool", llmtoolkit.ErrInvalidTool},
	{"llmtoolkit.ErrToolPanic", llmtoolkit.ErrToolPanic},
	{"llmtoolkit.ErrSchemaTooComplex", llmtoolkit.ErrSchemaTooComplex},
	{"agentloop.ErrTooManyCalls", ErrTooManyCalls},
	{"agentloop.ErrMaxIterations", ErrMaxIterations},
	{"agentloop.ErrCircuitBreaker", ErrCircuitBreaker},
	{"agentloop.ErrHalted", ErrHalted},
	{"agentloop.ErrInvalidOptions", ErrInvalidOptions},
	{"agentloop.ErrModelPanic", ErrModelPanic},
	{"agentloop.ErrCallbackPanic", ErrCallbackPanic},
	{"agentloop.ErrExecutor", ErrExecutor},
	{"context.Canceled", context.Canceled},
	{"context.DeadlineExceeded", context.DeadlineExceeded},
}

// The names of the error types an ErrorOutcome keeps.
const (
	kindHaltError       = "llmtoolkit.HaltError"
	kindDeniedError     = "llmtoolkit.DeniedError"
	kindPanicError      = "llmtoolkit.PanicError"
	kindModelPanicError = "agentloop.ModelPanicError"
)

// EncodeError returns the stored form of err, or nil for nil.
func EncodeError(err error) *ErrorOutcome {
	if err == nil {
		return nil
	}
	o := &ErrorOutcome{}
	o.Message, o.MessageBytes = splitText(err.Error())
	for _, k := range errorKinds {
		if errors.Is(err, k.err) {
			o.Kinds = append(o.Kinds, k.name)
		}
	}
	if he, ok := errors.AsType[*llmtoolkit.HaltError](err); ok {
		o.Kinds = append(o.Kinds, kindHaltError)
		o.HaltReason = validText(he.Reason)
	}
	if de, ok := errors.AsType[*llmtoolkit.DeniedError](err); ok {
		o.Kinds = append(o.Kinds, kindDeniedError)
		o.DeniedTool, o.DeniedReason = validText(de.Tool), validText(de.Reason)
	}
	if pe, ok := errors.AsType[*llmtoolkit.PanicError](err); ok {
		o.Kinds = append(o.Kinds, kindPanicError)
		o.PanicValue = validText(fmt.Sprint(pe.Value))
	}
	if pe, ok := errors.AsType[*ModelPanicError](err); ok {
		o.Kinds = append(o.Kinds, kindModelPanicError)
		o.PanicValue = validText(fmt.Sprint(pe.Value))
	}
	return o
}

// Unpack restores the error: nil for a nil o, else a [*RecordedError]
// with the original's message, for which errors.Is holds for the same
// sentinels and errors.As finds the kept error types with their fields.
// Kinds it does not know (from a later version) are ignored.
func (o *ErrorOutcome) Unpack() error {
	if o == nil {
		return nil
	}
	re := &RecordedError{msg: joinText(o.Message, o.MessageBytes)}
	for _, name := range o.Kinds {
		switch name {
		case kindHaltError:
			re.wraps = append(re.wraps, &llmtoolkit.HaltError{Reason: o.HaltReason})
		case kindDeniedError:
			re.wraps = append(re.wraps, &llmtoolkit.DeniedError{Tool: o.DeniedTool, Reason: o.DeniedReason})
		case kindPanicError:
			re.wraps = append(re.wraps, &llmtoolkit.PanicError{Value: o.PanicValue})
		case kindModelPanicError:
			re.wraps = append(re.wraps, &ModelPanicError{Value: o.PanicValue})
		default:
			for _, k := range errorKinds {
				if k.name == name {
					re.wraps = append(re.wraps, k.err)
					break
				}
			}
		}
	}
	return re
}

// RecordedError is an error restored from its stored form
// ([ErrorOutcome.Unpack]): its message is the original's, and it wraps the
// sentinels and typed errors the original wrapped (see [ErrorOutcome]).
type RecordedError struct {
	msg   string
	wraps []error
}

// Error returns the original error's message.
func (e *RecordedError) Error() string { return e.msg }

// Unwrap returns the sentinels and typed errors the original wrapped.
func (e *RecordedError) Unwrap() []error { return e.wraps }

// EncodeResult returns the stored form of res.
func EncodeResult(res llmtoolkit.Result) ToolOutcome {
	o := ToolOutcome{ToolCallID: res.ToolCallID, Name: res.Name, IsError: res.IsError, Err: EncodeError(res.Err), Parts: res.Parts}
	o.Content, o.ContentBytes = splitText(res.Content)
	if d := res.Display; d != nil {
		o.Display = &DisplayOutcome{Kind: d.Kind}
		if d.Payload != nil {
			p, err := json.Marshal(d.Payload)
			if err != nil {
				o.Display.PayloadError = fmt.Sprintf("the payload of the %q display could not be encoded as JSON: %v", d.Kind, err)
			} else {
				o.Display.Payload = p
			}
		}
	}
	return o
}

// Result restores the Result: its content and flags as they were, Err as a
// [*RecordedError] (see [ErrorOutcome.Unpack]), the Display's payload as
// generic JSON (nil when it could not be encoded).
func (o ToolOutcome) Result() llmtoolkit.Result {
	res := llmtoolkit.Result{
		ToolCallID: o.ToolCallID, Name: o.Name, Content: joinText(o.Content, o.ContentBytes),
		IsError: o.IsError, Err: o.Err.Unpack(), Parts: o.Parts,
	}
	if o.Display != nil {
		d := llmtoolkit.Display{Kind: o.Display.Kind}
		if len(o.Display.Payload) > 0 {
			if err := json.Unmarshal(o.Display.Payload, &d.Payload); err != nil {
				d.Payload = nil // not JSON: a corrupt store; the kind is kept
			}
		}
		res.Display = &d
	}
	return res
}

// EncodeModel returns the stored form of a model call's outcome: resp, or
// err when it is not nil. Restored, the response is what JSON keeps of it
// (tool call arguments as JSON decodes them, as the provider parsers build
// them). A response that cannot be encoded as JSON (a NaN argument, say)
// is stored as an error wrapping [ErrExecutor] that says so.
func EncodeModel(resp Response, err error) ModelOutcome {
	if err != nil {
		return ModelOutcome{Err: EncodeError(err)}
	}
	b, jerr := json.Marshal(resp)
	if jerr != nil {
		return ModelOutcome{Err: EncodeError(fmt.Errorf("%w: the model's response could not be encoded as JSON to be recorded: %w", ErrExecutor, jerr))}
	}
	return ModelOutcome{Response: b}
}

// Unpack restores the outcome: the response, or the error (a
// [*RecordedError]). An outcome whose response is not valid JSON (a
// corrupt store) gives an error wrapping [ErrExecutor].
func (o ModelOutcome) Unpack() (Response, error) {
	if o.Err != nil {
		return Response{}, o.Err.Unpack()
	}
	var resp Response
	if len(o.Response) == 0 {
		return resp, &RecordedError{msg: "agentloop: the recorded model outcome holds neither a response nor an error", wraps: []error{ErrExecutor}}
	}
	if err := json.Unmarshal(o.Response, &resp); err != nil {
		return Response{}, &RecordedError{msg: "agentloop: the recorded model response is not valid JSON: " + err.Error(), wraps: []error{ErrExecutor}}
	}
	return resp, nil
}

// GobEncode encodes o as its JSON form, so that gob keeps what JSON keeps.
func (o ToolOutcome) GobEncode() ([]byte, error) {
	type plain ToolOutcome
	return json.Marshal(plain(o))
}

// GobDecode decodes the JSON form GobEncode wrote.
func (o *ToolOutcome) GobDecode(b []byte) error {
	type plain ToolOutcome
	return json.Unmarshal(b, (*plain)(o))
}

// GobEncode encodes o as its JSON form, so that gob keeps what JSON keeps.
func (o ModelOutcome) GobEncode() ([]byte, error) {
	type plain ModelOutcome
	return json.Marshal(plain(o))
}

// GobDecode decodes the JSON form GobEncode wrote.
func (o *ModelOutcome) GobDecode(b []byte) error {
	type plain ModelOutcome
	return json.Unmarshal(b, (*plain)(o))
}

// splitText returns s as a JSON string can carry it: s itself when it is
// valid UTF-8, else "" and its bytes.
func splitText(s string) (string, []byte) {
	if utf8.ValidString(s) {
		return s, nil
	}
	return "", []byte(s)
}

// validText returns s with each run of bytes that are not UTF-8 replaced
// by U+FFFD, as a JSON string keeps it.
func validText(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

// joinText is the inverse of splitText.
func joinText(s string, b []byte) string {
	if b != nil {
		return string(b)
	}
	return s
}
