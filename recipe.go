package llmtoolkit

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
)

// Recipe turns a call's arguments into a [Plan]. Set it on a tool's
// definition ([Tool.Recipe]) to make the tool a plan of other calls.
type Recipe func(args map[string]any) Plan

// Gate checks a recipe call before its plan runs (see [Tool.Gates]): it
// returns the call to run, its arguments possibly changed, or the error
// that refuses it (a [*DeniedError] for a permission refusal).
type Gate func(ctx context.Context, call Call) (Call, error)

// Plan is what a recipe asks [Execute] to run.
type Plan struct {
	// Serial calls run in order, first.
	Serial []Call
	// Parallel calls run concurrently (at most GOMAXPROCS at once), after Serial.
	Parallel []Call
	// Compose builds the final content from the results, in plan order
	// (Serial then Parallel). Nil joins the contents with blank lines.
	// Either way the recipe's result carries the steps' [Result.Parts], in
	// plan order.
	Compose func(results []Result) (string, error)
}

// planResult builds and runs the plan, rescuing a panic of the recipe or of
// Compose.
func planResult(ctx context.Context, r Resolver, tool Tool, call Call) (res Result) {
	defer func() {
		if v := recover(); v != nil {
			res = panicResult(ctx, "recipe", tool, call, v)
		}
	}()
	plan := tool.Recipe(call.Arguments)
	results := make([]Result, 0, len(plan.Serial)+len(plan.Parallel))
	for i, step := range plan.Serial {
		sr := Execute(ctx, r, step)
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
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				defer func() {
					if v := recover(); v != nil { // Execute does not panic; an error's Error method might
						par[i] = panicResult(ctx, "recipe step", tool, step, v)
					}
				}()
				par[i] = Execute(ctx, r, step)
			})
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
		return Result{ToolCallID: call.ID, Name: call.Name, Content: strings.Join(contents, "\n\n"), Parts: stepParts(results)}
	}
	content, err := plan.Compose(results)
	if err != nil {
		return errorResult(call, err, fmt.Sprintf("tool %q failed composing its results: %v", call.Name, err))
	}
	return Result{ToolCallID: call.ID, Name: call.Name, Content: content, Parts: stepParts(results)}
}

func stepFailure(call Call, n int, sr Result) Result {
	err := fmt.Errorf("step %d (%s): %w", n, sr.Name, sr.Err)
	return errorResult(call, err, fmt.Sprintf("step %d (%s) failed: %s", n, sr.Name, sr.Content))
}

// ResolveRecipe keeps the recipe promise for a call that reaches a
// wrapper's Resolve outside [Execute] (a host or a resolver calling Resolve
// directly): when r, the wrapper itself, defines the call's tool as a
// recipe and ctx runs no recipe's plan yet, it runs the call with Execute
// on r, so that the recipe's gates and every step of its plan go through
// r and whatever r wraps, as they would had the call come through
// Execute; it returns the result as Resolve does (an error result as an
// error whose text is the result's content, wrapping its Err; the parts
// and the Display passed on to ctx) and handled true. Otherwise it does
// nothing and returns handled false: the wrapper resolves the call as
// usual. Every wrapper of this module that checks or observes calls (the
// agent guard, Filter, Session, trace.Recorder, otelkit.Resolver) calls it
// first; a host's own guard should too:
//
//	func (g *myGuard) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
//		if content, ok, err := llmtoolkit.ResolveRecipe(ctx, g, call); ok {
//			return content, err
//		}
//		// check call, then pass it on
//	}
//
// Without it, the resolver that owns the recipe (toolsearch's call_tool)
// runs the plan below the wrapper, whose checks then see only the recipe
// call.
func ResolveRecipe(ctx context.Context, r Resolver, call Call) (content string, handled bool, err error) {
	if _, inRecipe := RecipeRunFrom(ctx); inRecipe || r == nil {
		return "", false, nil
	}
	tool, found, lerr := guardedLookup(r, call.Name)
	if lerr != nil || !found || tool.Recipe == nil {
		return "", false, nil
	}
	res := Execute(ctx, r, call)
	if res.Display != nil {
		Show(ctx, *res.Display)
	}
	Attach(ctx, res.Parts...)
	if res.IsError {
		return "", true, &resultError{content: res.Content, err: res.Err}
	}
	return res.Content, true, nil
}

// resultError is an error result of Execute as Resolve returns it: its
// text is the result's content (what the model is told), and it wraps the
// result's Err.
type resultError struct {
	content string
	err     error
}

func (e *resultError) Error() string { return e.content }
func (e *resultError) Unwrap() error { return e.err }
