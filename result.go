package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
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
	// Err is the error behind IsError, for errors.Is ([ErrHalt],
	// [ErrUnknownTool], [ErrInvalidArguments], [ErrToolPanic], ...).
	Err error `json:"-"`
}

// Display is a structured payload a tool attaches for hosts (a TUI, a web
// UI): the model never sees it.
type Display struct {
	// Kind names the payload's shape: "file", "diff", "process", "matches",
	// "webpage", ...
	Kind string `json:"kind"`
	// Payload holds the data.
	Payload map[string]any `json:"payload,omitempty"`
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
// When r is a [RecipeProvider] with a recipe for the tool, Execute runs the
// recipe's [Plan]. Otherwise it validates the arguments against the tool's
// schema (when r lists the tool) and calls r.Resolve. Every failure becomes
// IsError with a Content the model can act on, and Err keeps the cause:
// an unknown tool lists the available ones, invalid arguments give the
// validation message (the tool is not called), a panic is rescued and logged
// with its stack through log/slog, and a cancelled or expired ctx says so.
func Execute(ctx context.Context, r Resolver, call Call) Result {
	if r == nil {
		return errorResult(call, fmt.Errorf("%w: %q (no resolver)", ErrUnknownTool, call.Name), "no tools are available: the resolver is nil")
	}
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	if err := ctx.Err(); err != nil {
		return errorResult(call, err, cancelMessage(call.Name, err))
	}
	if rp, ok := r.(RecipeProvider); ok {
		if recipe := rp.DispatchRecipe(call.Name); recipe != nil {
			return runRecipe(ctx, r, call, recipe)
		}
	}
	return executeDirect(ctx, r, call)
}

// executeDirect validates and resolves one call, without recipes.
func executeDirect(ctx context.Context, r Resolver, call Call) Result {
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	if tool, ok := lookupTool(r, call.Name); ok {
		if err := tool.ValidateArguments(call.Arguments); err != nil {
			return errorResult(call, err, err.Error())
		}
	}
	slot := &displaySlot{}
	if fn, ok := ctx.Value(showFuncKey{}).(func(Display)); ok {
		slot.notify = fn
	}
	content, err := safeResolve(context.WithValue(ctx, displayKey{}, slot), r, call)
	slot.mu.Lock()
	display := slot.display
	slot.mu.Unlock()
	if err != nil {
		res := errorResult(call, err, failureMessage(ctx, r, call, err))
		res.Display = display
		return res
	}
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content, Display: display}
}

// safeResolve calls r.Resolve and turns a panic into a *PanicError.
func safeResolve(ctx context.Context, r Resolver, call Call) (content string, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			slog.ErrorContext(ctx, "llmtoolkit: tool panicked",
				slog.String("tool", call.Name), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
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
		tools := r.Tools()
		if _, listed := lookupTool(r, call.Name); listed || len(tools) == 0 {
			return err.Error()
		}
		return fmt.Sprintf("unknown tool: %q. Available tools: %s", call.Name, toolNames(tools))
	}
	return err.Error()
}

func cancelMessage(name string, err error) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("tool %q did not finish: its deadline expired (%v)", name, err)
	}
	return fmt.Sprintf("tool %q did not finish: the call was cancelled (%v)", name, err)
}

// runRecipe runs a recipe's plan: Serial steps in order, then Parallel steps
// concurrently, then Compose.
func runRecipe(ctx context.Context, r Resolver, call Call, recipe Recipe) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			pe := &PanicError{Value: v, Stack: debug.Stack()}
			slog.ErrorContext(ctx, "llmtoolkit: recipe panicked",
				slog.String("tool", call.Name), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			res = errorResult(call, pe, pe.Error())
		}
	}()
	plan := recipe(call.Arguments)
	results := make([]Result, 0, len(plan.Serial)+len(plan.Parallel))
	for i, step := range plan.Serial {
		sr := executeDirect(ctx, r, step)
		if sr.IsError {
			return stepFailure(call, i+1, sr)
		}
		results = append(results, sr)
	}
	if n := len(plan.Parallel); n > 0 {
		par := make([]Result, n)
		sem := make(chan struct{}, runtime.GOMAXPROCS(0))
		var wg sync.WaitGroup
		for i, step := range plan.Parallel {
			wg.Add(1)
			sem <- struct{}{}
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				par[i] = executeDirect(ctx, r, step)
			}()
		}
		wg.Wait()
		for i, sr := range par {
			if sr.IsError {
				return stepFailure(call, len(plan.Serial)+i+1, sr)
			}
		}
		results = append(results, par...)
	}
	if plan.Compose == nil {
		contents := make([]string, len(results))
		for i, sr := range results {
			contents[i] = sr.Content
		}
		return Result{ToolCallID: call.ID, Name: call.Name, Content: strings.Join(contents, "\n\n")}
	}
	content, err := plan.Compose(results)
	if err != nil {
		return errorResult(call, err, fmt.Sprintf("tool %q failed composing its results: %v", call.Name, err))
	}
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content}
}

func stepFailure(call Call, n int, sr Result) Result {
	err := fmt.Errorf("step %d (%s): %w", n, sr.Name, sr.Err)
	return errorResult(call, err, fmt.Sprintf("step %d (%s) failed: %s", n, sr.Name, sr.Content))
}
