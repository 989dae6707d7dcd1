package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"time"

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

// Execute runs one call on r and always returns a Result: it never panics
// and never returns a Go error. It is what an agent loop calls.
//
// Execute finds the tool's definition through r (its Tools, or LookupTool),
// validates the arguments against its schema, then runs the tool's
// [Tool.Recipe] when it has one, or calls r.Resolve. Every failure becomes
// IsError with a Content the model can act on, and Err keeps the cause: an
// unknown tool lists the available ones, invalid arguments give the
// validation message (the tool is not called), a panic (of the tool, of r, or
// while validating) is rescued and logged with its stack through log/slog
// (the value as text, scrubbed of the call's [Tool.SensitiveFields] values
// and URL passwords),
// and a cancelled or expired ctx says so. A [Call.Malformed] call (its
// arguments were not a JSON object) never runs: its result quotes the
// arguments and the parse error, and Err wraps [ErrInvalidCall]. A call
// answered without reaching r.Resolve (refused, or run as a recipe) is told
// to the definition's [Tool.Observers].
func Execute(ctx context.Context, r Resolver, call Call) Result {
	start := time.Now()
	if r == nil {
		return errorResult(call, fmt.Errorf("%w: %q (no resolver)", ErrUnknownTool, call.Name), "no tools are available: the resolver is nil")
	}
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	tool, found, err := guardedLookup(r, call.Name)
	if err != nil {
		return panicResult(ctx, "resolver", Tool{}, call, err)
	}
	if call.Malformed != nil {
		merr := malformedError(call)
		res := errorResult(call, merr, merr.Error())
		if found {
			TellObservers(ctx, Observation{Kind: ObservedRefused, Call: call, Tool: tool, Result: res, Duration: time.Since(start)})
		}
		return res
	}
	if found {
		if res, refused := admit(ctx, tool, call); refused {
			TellObservers(ctx, Observation{Kind: ObservedRefused, Call: call, Tool: tool, Result: res, Duration: time.Since(start)})
			return res
		}
		if tool.Recipe != nil {
			if _, inRecipe := RecipeRunFrom(ctx); !inRecipe {
				call, res, refused := passGates(ctx, tool, call)
				if refused {
					TellObservers(ctx, Observation{Kind: ObservedRefused, Call: call, Tool: tool, Result: res, Duration: time.Since(start)})
					return res
				}
				return runRecipe(ctx, r, tool, call, start)
			}
		}
	} else if err := ctx.Err(); err != nil {
		return errorResult(call, err, cancelMessage(call.Name, err))
	}
	return executeDirect(ctx, r, tool, call)
}

// admit checks a call before it runs: the context is not done and the
// arguments satisfy the tool's schema. A panic while validating refuses the
// call too.
func admit(ctx context.Context, tool Tool, call Call) (res Result, refused bool) {
	if err := ctx.Err(); err != nil {
		return errorResult(call, err, cancelMessage(call.Name, err)), true
	}
	if err := guardedValidate(ctx, tool, call.Arguments); err != nil {
		var pe *PanicError
		if errors.As(err, &pe) {
			return panicResult(ctx, "validator", tool, call, pe), true
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return errorResult(call, err, cancelMessage(call.Name, err)), true
		}
		return errorResult(call, err, err.Error()), true
	}
	return Result{}, false
}

// guardedLookup finds a tool's definition through r, turning a panic of r's
// Tools or LookupTool into a *PanicError.
func guardedLookup(r Resolver, name string) (tool Tool, found bool, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	tool, found = FindTool(r, name)
	return tool, found, nil
}

// guardedValidate is [Tool.ValidateArgumentsContext], turning a panic into
// a *PanicError.
func guardedValidate(ctx context.Context, tool Tool, args map[string]any) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return tool.ValidateArgumentsContext(ctx, args)
}

// panicResult is the result of a call of tool during which what panicked,
// logged with its stack (logPanic).
func panicResult(ctx context.Context, what string, tool Tool, call Call, v any) Result {
	pe, ok := v.(*PanicError)
	if !ok {
		pe = &PanicError{Value: v, Stack: debug.Stack()}
	}
	logPanic(ctx, what, tool, call, pe)
	return errorResult(call, pe, pe.Error())
}

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

// executeDirect resolves one call of tool (its definition, or the zero
// Tool when r lists none), collecting what it shows.
func executeDirect(ctx context.Context, r Resolver, tool Tool, call Call) Result {
	slot := &displaySlot{call: call}
	if fn, ok := ctx.Value(showFuncKey{}).(func(Display)); ok {
		slot.notify = fn
	}
	pctx, parts := withPartSlot(context.WithValue(ctx, displayKey{}, slot))
	content, err := safeResolve(pctx, r, tool, call)
	slot.mu.Lock()
	display := slot.display
	slot.mu.Unlock()
	if err != nil {
		res := errorResult(call, err, failureMessage(ctx, r, call, err))
		res.Display, res.Parts = display, parts.take()
		return res
	}
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content, Display: display, Parts: parts.take()}
}

// safeResolve calls r.Resolve and turns a panic into a *PanicError, logged
// with the call's secrets scrubbed (logPanic).
func safeResolve(ctx context.Context, r Resolver, tool Tool, call Call) (content string, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			logPanic(ctx, "tool", tool, call, pe)
			content, err = "", pe
		}
	}()
	return r.Resolve(ctx, call)
}

func errorResult(call Call, err error, content string) Result {
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content, IsError: true, Err: err}
}

// failureMessage turns a resolver's error into text the model can act on.
func failureMessage(ctx context.Context, r Resolver, call Call, err error) string {
	switch {
	case ctx.Err() != nil:
		return cancelMessage(call.Name, ctx.Err())
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		return cancelMessage(call.Name, err)
	case errors.Is(err, ErrUnknownTool):
		tools, _ := guardedTools(r)
		if _, listed, _ := guardedLookup(r, call.Name); listed || len(tools) == 0 {
			return err.Error()
		}
		return fmt.Sprintf("unknown tool: %q. Available tools: %s", call.Name, toolNames(tools))
	}
	return modelMessage(err)
}

// guardedTools is r.Tools(), or nil if it panics.
func guardedTools(r Resolver) (tools []Tool, ok bool) {
	defer func() {
		if recover() != nil {
			tools, ok = nil, false
		}
	}()
	return r.Tools(), true
}

func cancelMessage(name string, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("tool %q did not finish: its deadline expired (%v)", name, err)
	}
	return fmt.Sprintf("tool %q did not finish: the call was cancelled (%v)", name, err)
}
