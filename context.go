package llmtoolkit

import (
	"context"
	"crypto/rand"
	"fmt"
	"sync/atomic"
)

type sessionKey struct{}

// WithSession returns a context carrying the session map s. Tools read it
// with [SessionFrom].
func WithSession(ctx context.Context, s map[string]any) context.Context {
	return context.WithValue(ctx, sessionKey{}, s)
}

// SessionFrom returns the session map bound by [WithSession], or nil.
func SessionFrom(ctx context.Context) map[string]any {
	s, _ := ctx.Value(sessionKey{}).(map[string]any)
	return s
}

type iterationKey struct{}

// iteration is the value of [WithIteration]; its address identifies the
// turn ([TurnFrom]).
type iteration struct{ n int }

// WithIteration returns a context saying that the calls made with it belong
// to iteration n (1-based) of an agent loop, and to one turn of it
// ([TurnFrom]). agentloop.Run sets it on every call; trace.Recorder records
// it.
func WithIteration(ctx context.Context, n int) context.Context {
	return context.WithValue(ctx, iterationKey{}, &iteration{n: n})
}

// IterationFrom returns the iteration set by [WithIteration], and whether
// one was set.
func IterationFrom(ctx context.Context) (int, bool) {
	it, ok := ctx.Value(iterationKey{}).(*iteration)
	if !ok {
		return 0, false
	}
	return it.n, true
}

// Turn identifies one turn of an agent loop: the calls made with one
// context returned by [WithIteration], or derived from it, share it; no two
// WithIteration calls give the same one, whatever their iteration numbers
// (a sub-agent's loop restarts at 1; a second run too). The zero Turn is
// no turn. Turns are comparable.
type Turn struct{ it *iteration }

// TurnFrom returns the turn set by [WithIteration], and whether one was set.
func TurnFrom(ctx context.Context) (Turn, bool) {
	it, ok := ctx.Value(iterationKey{}).(*iteration)
	return Turn{it: it}, ok
}

type agentIDKey struct{}

// WithAgentID returns a context saying that the calls made with it are made
// by the agent id: a sub-agent started by a parent run (package agent's
// spawn_agent sets it). The parent's session and conversation travel on
// unchanged, so an audit trail (trace.Recorder records it as agent_id) can
// tell a sub-agent's calls from its parent's in the same conversation.
func WithAgentID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, agentIDKey{}, id)
}

// AgentIDFrom returns the agent id set by [WithAgentID], or "" for the
// top-level agent.
func AgentIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(agentIDKey{}).(string)
	return id
}

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

// WithDefinitionSink returns a context in which a resolver that learns the
// definition of the call it resolves, where the wrappers above it could
// not find it, tells fn of it with [TellDefinition] before the tool runs.
// A [Session] does so for the undeclared steps of a declared recipe, which
// it does not list; trace.Recorder binds a sink when it cannot find a
// call's definition, so that it still redacts that tool's sensitive
// fields. fn may be called from the goroutine that runs the call; sinks
// bound by several wrappers are all told. A nil fn leaves ctx as it is.
func WithDefinitionSink(ctx context.Context, fn func(Tool)) context.Context {
	if fn == nil {
		return ctx
	}
	if prev, ok := ctx.Value(definitionSinkKey{}).(func(Tool)); ok {
		inner := fn
		fn = func(t Tool) { inner(t); prev(t) }
	}
	return context.WithValue(ctx, definitionSinkKey{}, fn)
}

// CatchDefinition binds a sink (see [WithDefinitionSink]) that keeps the
// last definition told for the tool called name, and returns a function
// that reports it. A wrapper that cannot find a call's definition uses it
// to learn the one a resolver below tells (trace.Recorder and
// otelkit.Resolver do, to redact an undeclared recipe step's secrets).
func CatchDefinition(ctx context.Context, name string) (context.Context, func() (Tool, bool)) {
	var caught atomic.Pointer[Tool]
	ctx = WithDefinitionSink(ctx, func(t Tool) {
		if t.Name == name {
			caught.Store(&t)
		}
	})
	return ctx, func() (Tool, bool) {
		if t := caught.Load(); t != nil {
			return *t, true
		}
		return Tool{}, false
	}
}

// TellDefinition tells the sinks bound by [WithDefinitionSink] in ctx, if
// any, that t is the definition of the call being resolved with ctx.
func TellDefinition(ctx context.Context, t Tool) {
	if fn, ok := ctx.Value(definitionSinkKey{}).(func(Tool)); ok && fn != nil {
		fn(t)
	}
}
