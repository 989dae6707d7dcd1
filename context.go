package llmtoolkit

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
)

type recipeRunKey struct{}

// RecipeRun identifies one run of a recipe (see [Tool.Recipe]). [Execute]
// puts it in the context of each of the run's steps.
type RecipeRun struct {
	// ID is unique to this run (a random UUID). The recipe call's
	// [Observation] carries it as RunID, so an audit trail can link each
	// step to its parent.
	ID string
	// Tool is the recipe tool's name.
	Tool string
	// CallID is the recipe call's [Call.ID].
	CallID string
}

// RecipeRunFrom returns the recipe run a call is a step of, if any.
func RecipeRunFrom(ctx context.Context) (RecipeRun, bool) {
	r, ok := ctx.Value(recipeRunKey{}).(RecipeRun)
	return r, ok
}

// withRecipeRun marks ctx as the context of a recipe run's steps.
func withRecipeRun(ctx context.Context, r RecipeRun) context.Context {
	return context.WithValue(ctx, recipeRunKey{}, r)
}

// newRunID returns a random (version 4) UUID.
func newRunID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics rather than return an error)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

type definitionSinkKey struct{}

// CatchDefinition installs a Definition listener (see [Listeners]) that
// keeps the last definition told for the tool called name, and returns a
// function that reports it. A wrapper that cannot find a call's definition uses it
// to learn the one a resolver below tells (trace.Recorder and
// otelkit.Resolver do, to redact an undeclared recipe step's secrets).
func CatchDefinition(ctx context.Context, name string) (context.Context, func() (Tool, bool)) {
	var caught atomic.Pointer[Tool]
	ctx = WithListeners(ctx, Listeners{Definition: func(t Tool) {
		if t.Name == name {
			caught.Store(&t)
		}
	}})
	return ctx, func() (Tool, bool) {
		if t := caught.Load(); t != nil {
			return *t, true
		}
		return Tool{}, false
	}
}

// TellDefinition tells the Definition listeners of ctx ([Listeners]), if
// any, that t is the definition of the call being resolved with ctx.
func TellDefinition(ctx context.Context, t Tool) {
	if fn, ok := ctx.Value(definitionSinkKey{}).(func(Tool)); ok && fn != nil {
		fn(t)
	}
}
