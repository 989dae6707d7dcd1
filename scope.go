package llmtoolkit

import (
	"context"
	"slices"
)

// Scope is what the calls made with a context belong to: whose session,
// which durable run, which agent, which turn of the loop, and which paths
// are off limits. Hosts, loops, engines and guards set it with
// [WithScope]; tools and wrappers read all of it in one call with
// [ScopeFrom]. It travels on the context, so every wrapper, goroutine and
// sub-agent handed the context has it.
//
// Where a running call's reports go (its Display, parts, progress) is kept
// apart, in [Listeners].
type Scope struct {
	// Session is the session map of the calls ([PrepareSession] binds
	// it): "tenant_id" and "conversation_id", which package trace
	// attributes rows to and package agent reads, and the host's own keys.
	// Read it; never modify it.
	Session map[string]any
	// RunID is the durable run the calls belong to: its engine
	// (agentloop.Executor) sets the run's identity here (its workflow ID),
	// the same on every attempt of the run, so that [IdempotencyKey] is
	// unique across runs. "" outside a durable run.
	RunID string
	// AgentID names the sub-agent making the calls (package agent's
	// spawn_agent sets it), "" for the top-level agent. The parent's
	// session travels on unchanged, so an audit trail (trace records it as
	// agent_id) tells a sub-agent's calls from its parent's in the same
	// conversation.
	AgentID string
	// Iteration is the 1-based iteration of the agent loop the calls
	// belong to (agentloop.Run sets it on every call; trace records it),
	// 0 outside a loop. Set it, with Turn, by [Scope.StartTurn].
	Iteration int
	// Turn identifies the turn of the loop the calls belong to: the calls
	// made with one context whose scope had StartTurn, or derived from it,
	// share it; no two StartTurn give the same one, whatever their
	// iteration numbers (a sub-agent's loop restarts at 1; a second run
	// too). The zero Turn is no turn.
	Turn Turn
	// ExcludedPaths tells a recursive tool (one that walks folders: grep,
	// glob, tree, list_directory) to leave out every path matching one of
	// these globs: doublestar patterns on canonical paths (see
	// [PathArguments.Canonical]), "secrets/**" leaving out the folder
	// secrets and all it holds. A permission layer adds its deny rules
	// here so that a walk never returns what a direct call would be
	// refused; the tool's answer says what it left out. Add to it (a
	// sub-agent's guard adds to its parent's), never replace it.
	ExcludedPaths []string
	// HiddenPaths are globs, as ExcludedPaths, of paths that no process
	// serving every tool may read: codetools' language servers, which
	// serve every call, hide them from their servers. A permission layer
	// adds the path globs of all its deny rules here, whichever tool they
	// name (package agent's guard does). Add to it, never replace it.
	// A decision that globs do not spell goes with [WithReadCheck].
	HiddenPaths []string
}

// Turn identifies one turn of an agent loop (see [Scope.Turn]). Turns are
// comparable.
type Turn struct{ it *iteration }

// iteration is a turn's identity: its address.
type iteration struct{ n int }

// StartTurn sets Iteration to n and Turn to a new turn, distinct from
// every other.
func (s *Scope) StartTurn(n int) {
	s.Iteration = n
	s.Turn = Turn{it: &iteration{n: n}}
}

type scopeKey struct{}

// WithScope returns a context whose [Scope] is ctx's changed by edit. edit
// is handed a copy (ctx's own scope does not change), whose ExcludedPaths
// and HiddenPaths may be appended to safely:
//
//	ctx = llmtoolkit.WithScope(ctx, func(s *llmtoolkit.Scope) {
//		s.Session = map[string]any{"tenant_id": tenantID, "conversation_id": conversationID}
//		s.RunID = workflowID
//	})
func WithScope(ctx context.Context, edit func(*Scope)) context.Context {
	s := ScopeFrom(ctx)
	s.ExcludedPaths = slices.Clip(s.ExcludedPaths)
	s.HiddenPaths = slices.Clip(s.HiddenPaths)
	edit(&s)
	return context.WithValue(ctx, scopeKey{}, &s)
}

// ScopeFrom returns the [Scope] of ctx, the zero Scope when none was set.
// Its ExcludedPaths and HiddenPaths must not be modified.
func ScopeFrom(ctx context.Context) Scope {
	if s, ok := ctx.Value(scopeKey{}).(*Scope); ok {
		return *s
	}
	return Scope{}
}

// Listeners are where what a running call reports goes: hosts and the
// wrappers that observe calls install them with [WithListeners]; tools
// reach them through [Show], [Attach], [ReportProgress], [TellDefinition]
// and [WrapForSubAgent], never directly.
type Listeners struct {
	// Show is called on every [Show], as it happens (to stream a Display
	// to a UI before the tool ends, say). It replaces the Show listener
	// ctx had; to silence one, install a function that does nothing.
	// Inside an [Execute], one installed beneath it (by a wrapper between
	// Execute and the tool) is told as well as the one Execute was given.
	Show func(Display)
	// Parts is called on every [Attach] with the parts attached, before
	// the running [Execute] keeps them. Wrappers that observe results
	// (trace.Recorder, otelkit.Resolver) install one around the call they
	// pass on, to record what the tool attached. It may be called from the
	// goroutine that runs the call; it must not keep or change the parts'
	// Data. It is added to the Parts listeners ctx had (all are called);
	// each Execute starts its own chain: listeners installed outside an
	// Execute are not told of its call's parts (its caller reads
	// [Result.Parts]).
	Parts func([]Part)
	// Progress is called on every [ReportProgress], as it happens. It
	// replaces the Progress listener ctx had.
	Progress func(Progress)
	// Definition is told, by [TellDefinition], the definition of the call
	// being resolved when a resolver learns it where the wrappers above it
	// could not find it, before the tool runs. A [Session] does so for the
	// undeclared steps of a declared recipe, which it does not list;
	// trace.Recorder installs one when it cannot find a call's definition,
	// so that it still redacts that tool's sensitive fields
	// ([CatchDefinition] does this). It may be called from the goroutine
	// that runs the call. It is added to the Definition listeners ctx had
	// (all are told).
	Definition func(Tool)
	// SubAgent wraps the resolver of every sub-agent started with ctx
	// (agent's spawn_agent, or any tool that runs an agent of its own on
	// behalf of a call), so that a wrapper of the parent's stack that must
	// see every call, such as trace's Recorder, sees the sub-agent's calls
	// too without the host wiring it twice. A wrapper installs itself on
	// the context of each call it resolves; the tool that starts the
	// sub-agent applies them with [WrapForSubAgent]. It must return its
	// argument unchanged when it already wraps it (so that a resolver the
	// host wrapped itself is not wrapped again). It is added to the
	// SubAgent listeners ctx had.
	SubAgent func(Resolver) Resolver
}

// WithListeners returns a context with l's listeners installed; its nil
// fields leave ctx's as they are (see each field for whether a listener
// replaces or adds to those ctx had).
func WithListeners(ctx context.Context, l Listeners) context.Context {
	if l.Show != nil {
		ctx = context.WithValue(ctx, showFuncKey{}, &showListener{fn: l.Show})
	}
	if l.Parts != nil {
		next, _ := ctx.Value(partSinkKey{}).(*partSink)
		ctx = context.WithValue(ctx, partSinkKey{}, &partSink{fn: l.Parts, next: next})
	}
	if l.Progress != nil {
		ctx = context.WithValue(ctx, progressFuncKey{}, l.Progress)
	}
	if l.Definition != nil {
		fn := l.Definition
		if prev, ok := ctx.Value(definitionSinkKey{}).(func(Tool)); ok {
			inner := fn
			fn = func(t Tool) { inner(t); prev(t) }
		}
		ctx = context.WithValue(ctx, definitionSinkKey{}, fn)
	}
	if l.SubAgent != nil {
		prev, _ := ctx.Value(subAgentWrappersKey{}).([]func(Resolver) Resolver)
		// A new slice each time: contexts that share a parent never share
		// appends.
		next := make([]func(Resolver) Resolver, len(prev), len(prev)+1)
		copy(next, prev)
		ctx = context.WithValue(ctx, subAgentWrappersKey{}, append(next, l.SubAgent))
	}
	return ctx
}

// ListenersFrom returns the listeners installed in ctx, each field nil
// when no one listens: for a tool that forwards what it receives from
// elsewhere (package mcp's client asks a server for progress only when
// Progress is not nil). Parts, Definition and SubAgent stand for all the
// listeners of their kind.
func ListenersFrom(ctx context.Context) Listeners {
	var l Listeners
	if s, _ := ctx.Value(showFuncKey{}).(*showListener); s != nil {
		l.Show = s.fn
	}
	l.Progress, _ = ctx.Value(progressFuncKey{}).(func(Progress))
	l.Definition, _ = ctx.Value(definitionSinkKey{}).(func(Tool))
	if s, _ := ctx.Value(partSinkKey{}).(*partSink); s != nil {
		l.Parts = func(parts []Part) { Attach(ctx, parts...) }
	}
	if w, _ := ctx.Value(subAgentWrappersKey{}).([]func(Resolver) Resolver); len(w) > 0 {
		l.SubAgent = func(r Resolver) Resolver { return WrapForSubAgent(ctx, r) }
	}
	return l
}
