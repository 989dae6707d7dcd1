package llmtoolkit

// The path of one call, in the order Execute takes it:
//
//  1. lookup      guardedLookup: the tool's definition through the resolver
//  2. admission   malformed calls, admit: a live context, valid arguments
//  3. recipe      passGates, runRecipe: a recipe tool's gates and plan
//  4. resolve     executeDirect, safeResolve: the resolver runs the call
//  5. failure     failureMessage, cancelMessage, errorResult, panicResult
//
// Observers ([TellObservers]) are told of every call answered without
// reaching the resolver: refused in 2 or 3, or run as a recipe in 3.

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/schema"
)

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
//
// A null for an optional property whose schema does not accept null (no
// "null" type, null enum value or nullable branch) means the property was
// left out, as a provider's strict mode sends it: the call is validated
// and run without it, at any depth the schema's "properties", "items" and
// local "$ref"s reach. Every other null is validated as it is, so a null
// for a required property is refused; the caller's map is never modified.
func Execute(ctx context.Context, r Resolver, call Call) Result {
	start := time.Now()
	// refuse tells the tool's observers of a call answered without running.
	refuse := func(call Call, tool Tool, res Result) Result {
		TellObservers(ctx, Observation{Kind: ObservedRefused, Call: call, Tool: tool, Result: res, Duration: time.Since(start)})
		return res
	}

	// 1. Lookup: the tool's definition through r (a panic of r is rescued).
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

	// 2. Admission: a malformed call never runs; a known tool's call runs
	// only with a live context and arguments its schema accepts.
	if call.Malformed != nil {
		merr := malformedError(call)
		res := errorResult(call, merr, merr.Error())
		if found {
			return refuse(call, tool, res)
		}
		return res
	}
	if !found {
		if err := ctx.Err(); err != nil {
			return errorResult(call, err, cancelMessage(call.Name, err))
		}
		// 4. Resolve (an unknown tool: r answers, or the failure text lists
		// the available ones).
		return executeDirect(ctx, r, tool, call)
	}
	call, res, refused := admit(ctx, tool, call)
	if refused {
		return refuse(call, tool, res)
	}

	// 3. Recipe: a recipe tool (not already inside a recipe run) passes its
	// gates, then runs its plan, each step through Execute; observers are
	// told of the recipe call.
	if tool.Recipe != nil {
		if _, inRecipe := RecipeRunFrom(ctx); !inRecipe {
			call, res, refused := passGates(ctx, tool, call)
			if refused {
				return refuse(call, tool, res)
			}
			return runRecipe(ctx, r, tool, call, start)
		}
	}

	// 4. Resolve: r.Resolve runs the call (a panic is rescued), collecting
	// its Display; an error becomes the failure text the model reads.
	return executeDirect(ctx, r, tool, call)
}

// admit checks a call before it runs: the context is not done and the
// arguments satisfy the tool's schema. It returns the call to run: a null
// for an optional property whose schema does not accept null means the
// property was left out (as a provider's strict mode sends it), so the
// call goes on without it (schema.DropOptionalNulls). A panic while validating
// refuses the call too.
func admit(ctx context.Context, tool Tool, call Call) (Call, Result, bool) {
	if err := ctx.Err(); err != nil {
		return call, errorResult(call, err, cancelMessage(call.Name, err)), true
	}
	args, pe := guardedDropNulls(tool.Parameters, call.Arguments)
	if pe != nil {
		return call, panicResult(ctx, "validator", tool, call, pe), true
	}
	call.Arguments = args
	if err := guardedValidate(ctx, tool, call.Arguments); err != nil {
		var pe *PanicError
		if errors.As(err, &pe) {
			return call, panicResult(ctx, "validator", tool, call, pe), true
		}
		if ctxErr := ctx.Err(); ctxErr != nil && errors.Is(err, ctxErr) {
			return call, errorResult(call, err, cancelMessage(call.Name, err)), true
		}
		return call, errorResult(call, err, err.Error()), true
	}
	return call, Result{}, false
}

// guardedDropNulls is schema.DropOptionalNulls, turning a panic into a
// *PanicError.
func guardedDropNulls(params, args map[string]any) (out map[string]any, err *PanicError) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return schema.DropOptionalNulls(params, args), nil
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

// passGates asks tool's gates about a recipe call, in order, and returns
// the call to run or the result that refuses it. A gate's panic refuses the
// call; arguments a gate changed are validated again.
func passGates(ctx context.Context, tool Tool, call Call) (Call, Result, bool) {
	for _, gate := range tool.Gates {
		if gate == nil {
			continue
		}
		next, err := guardedGate(ctx, gate, call)
		if err != nil {
			var pe *PanicError
			if errors.As(err, &pe) {
				return call, panicResult(ctx, "gate", tool, call, pe), true
			}
			return call, errorResult(call, err, err.Error()), true
		}
		if next.Arguments == nil {
			next.Arguments = map[string]any{}
		}
		next.ID, next.Name, next.Malformed, next.Provider = call.ID, call.Name, call.Malformed, call.Provider
		call = next
	}
	if len(tool.Gates) > 0 {
		return admit(ctx, tool, call)
	}
	return call, Result{}, false
}

// guardedGate calls gate, turning a panic into a *PanicError.
func guardedGate(ctx context.Context, gate Gate, call Call) (out Call, err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Stack: debug.Stack()}
		}
	}()
	return gate(ctx, call)
}

// runRecipe runs a recipe's plan: Serial steps in order, then Parallel steps
// concurrently, then Compose. Each step goes through [Execute] on r with the
// run in its context, so it is validated, rescued, observed and traced like
// any call; the recipe call itself is then told to the tool's observers.
func runRecipe(ctx context.Context, r Resolver, tool Tool, call Call, start time.Time) Result {
	run := RecipeRun{ID: newRunID(), Tool: call.Name, CallID: call.ID}
	res := planResult(withRecipeRun(ctx, run), r, tool, call)
	TellObservers(ctx, Observation{Kind: ObservedRecipe, Call: call, Tool: tool, Result: res, Duration: time.Since(start), RunID: run.ID})
	return res
}

// executeDirect resolves one call of tool (its definition, or the zero
// Tool when r lists none), collecting what it shows.
func executeDirect(ctx context.Context, r Resolver, tool Tool, call Call) Result {
	slot := &displaySlot{call: call}
	slot.notify, _ = ctx.Value(showFuncKey{}).(*showListener)
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

func errorResult(call Call, err error, content string) Result {
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content, IsError: true, Err: err}
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
