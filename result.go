package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// Result is the outcome of one tool call, ready to send back to the model.
type Result struct {
	// ToolCallID echoes [Call.ID].
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Name is the tool's name.
	Name string `json:"name"`
	// Content is what the model sees: the output, or the error message.
	Content string `json:"content"`
	// IsError marks a failed call; Content then says what went wrong.
	IsError bool `json:"is_error,omitempty"`
	// Display is a rich payload for hosts, attached by the tool with [Show].
	Display *Display `json:"display,omitempty"`
	// Parts is what the model sees after Content: images, documents, more
	// text, attached by the tool with [Attach], in order. Nil for a
	// text-only result (and left out of its JSON).
	Parts []Part `json:"parts,omitempty"`
	// Err is the error behind IsError, for errors.Is ([ErrHalt],
	// [ErrUnknownTool], [ErrInvalidArguments], [ErrToolPanic], ...).
	Err error `json:"-"`
}

// Display is a structured payload a tool attaches for hosts (a TUI, a web
// UI): the model never sees it.
//
// Payloads encode to JSON with one key style, camelCase ("exitCode",
// "firstChangedLine"): the style of the tools' argument names (oldText,
// ignoreCase) and of MCP, whose structuredContent carries a Display as
// it is. Every kind this module emits keeps to it, and tools of other
// packages should too.
type Display struct {
	// Kind names the payload's shape. The built-in tools' kinds are
	// "file", "diff", "process", "matches", "files" and "webpage", each
	// with its payload type in package codetools
	// ([github.com/llmtoolkit/llmtoolkit/codetools.FilePayload], ...), and
	// the agent layer's "todos" and "subagent", with theirs in package
	// agent ([github.com/llmtoolkit/llmtoolkit/agent.TodosPayload],
	// [github.com/llmtoolkit/llmtoolkit/agent.SubAgentPayload]).
	Kind string `json:"kind"`
	// Payload holds the data: for the built-in kinds a value (not a
	// pointer) of a documented Go type of the package that emits it, so a
	// host can type-switch on it; for others any value that encodes to
	// JSON. A Display decoded from JSON (from an MCP server, say) holds
	// the decoded value, a map[string]any for an object.
	Payload any `json:"payload,omitempty"`
}

// ErrToolPanic is wrapped by the error of a call whose tool panicked.
var ErrToolPanic = errors.New("tool execution failed")

// PanicError is the error of a call whose tool panicked. It wraps
// [ErrToolPanic].
type PanicError struct {
	// Value is what the tool panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error returns "tool execution failed: VALUE".
func (e *PanicError) Error() string { return fmt.Sprintf("tool execution failed: %v", e.Value) }

// Unwrap returns [ErrToolPanic].
func (e *PanicError) Unwrap() error { return ErrToolPanic }

// redacted replaces a secret in what Execute logs.
const redacted = "[REDACTED]"

// logPanic logs the panic pe of what, during call of tool (its definition,
// or the zero Tool when unknown), with its stack. The panic value is
// logged as text, with the values of the call's sensitive fields
// ([Tool.SensitiveFields]) and URL passwords scrubbed (internal/redact, as
// trace and agentloop scrub them): a tool that panics with its arguments
// in the value does not put a secret in the log.
func logPanic(ctx context.Context, what string, tool Tool, call Call, pe *PanicError) {
	raw := ""
	if call.Malformed != nil {
		raw = call.Malformed.Raw
	}
	secrets := redact.NewFields(tool.SensitiveFields).Secrets(call.Arguments, raw)
	slog.ErrorContext(ctx, "llmtoolkit: "+what+" panicked",
		slog.String("tool", call.Name), slog.String("panic", redact.Scrub(fmt.Sprint(pe.Value), secrets, redacted)),
		slog.String("stack", string(pe.Stack)))
}
