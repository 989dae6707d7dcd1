package llmtoolkit

import (
	"context"
	"fmt"
	"strings"
)

// Session is the resolver of one turn, built by [PrepareSession]: it lists
// the declared tools, resolves calls for them with the session map bound in
// the context, and refuses the others. It implements [Resolver] and
// [ToolLookup], so [Execute] validates arguments through it, and it passes
// on the declared tools' definitions with every per-tool fact; their
// [Tool.Observers] are told of the calls [Execute] answers itself (refused,
// or run as a recipe) with the session bound in the context, as the calls
// it resolves are, so that an audit trail inside the Session attributes
// them alike.
//
// A declared recipe tool runs its plan: its steps may call tools that were
// not declared (they are part of the declared tool), and each such step is
// validated against its own definition before it runs. A Session holds no
// mutable state, so concurrent turns with their own sessions never see each
// other's.
type Session struct {
	r      Resolver
	tools  []Tool
	byName map[string]int
	values map[string]any
	err    error // what the session's checkers found wrong with values
}

// PrepareSession prepares one turn: it returns the declared tools that r
// has, in declared order, and a [Session] that resolves calls for them with
// session bound in the context (read it as [ScopeFrom]'s Session).
//
// The Session refuses any tool that was not declared (unless it is a step
// of a declared recipe), with an error wrapping [ErrUnknownTool] that says
// the tool is not available in this session. When declared is empty or none
// of the declared tools exist, the tool list is nil and the Session, which
// is never nil, refuses every call.
//
// The declared tools' observers that read the session map
// ([SessionChecker], such as trace's Recorder, which needs UUID tenant_id
// and conversation_id values) check it here: [Session.Err] returns what
// they found, so check it once before the turn.
func PrepareSession(r Resolver, declared []string, session map[string]any) ([]Tool, *Session) {
	s := &Session{r: r, byName: make(map[string]int, len(declared)), values: session}
	var errs []error
	if r == nil {
		return nil, s
	}
	for _, name := range declared {
		if _, dup := s.byName[name]; dup {
			continue
		}
		if t, ok := FindTool(r, name); ok {
			s.byName[name] = len(s.tools)
			s.tools = append(s.tools, s.bound(t))
			errs = checkSession(t, session, errs)
		}
	}
	if errs != nil {
		s.err = joinErrors(errs)
	}
	return s.tools, s
}

// bound returns t with each of its observers told of calls, and each of
// its gates asked, with the session bound in the context.
func (s *Session) bound(t Tool) Tool {
	if len(t.Gates) > 0 {
		gates := make([]Gate, len(t.Gates))
		for i, g := range t.Gates {
			if g != nil {
				gates[i] = func(ctx context.Context, call Call) (Call, error) { return g(withSession(ctx, s.values), call) }
			}
		}
		t.Gates = gates
	}
	if len(t.Observers) == 0 {
		return t
	}
	obs := make([]Observer, len(t.Observers))
	for i, ob := range t.Observers {
		if ob != nil {
			ob = sessionObserver{ob: ob, values: s.values}
		}
		obs[i] = ob
	}
	t.Observers = obs
	return t
}

// sessionObserver tells ob of calls with a session bound in the context.
type sessionObserver struct {
	ob     Observer
	values map[string]any
}

// ObserveCall calls the wrapped observer with the session bound in ctx.
func (o sessionObserver) ObserveCall(ctx context.Context, obs Observation) {
	o.ob.ObserveCall(withSession(ctx, o.values), obs)
}

// Tools lists the declared tools that exist, in declared order. The slice
// is shared: do not modify it.
func (s *Session) Tools() []Tool { return s.tools }

// LookupTool returns a declared tool's definition.
func (s *Session) LookupTool(name string) (Tool, bool) {
	i, ok := s.byName[name]
	if !ok {
		return Tool{}, false
	}
	return s.tools[i], true
}

// Resolve resolves a declared tool's call, or a step of a declared recipe's
// run, with the session bound in ctx.
func (s *Session) Resolve(ctx context.Context, call Call) (string, error) {
	if content, ok, err := ResolveRecipe(ctx, s, call); ok {
		return content, err
	}
	if _, ok := s.byName[call.Name]; !ok {
		if err := s.admitStep(ctx, call); err != nil {
			return "", err
		}
	}
	return s.r.Resolve(withSession(ctx, s.values), call)
}

// admitStep lets through an undeclared call that is a step of a declared
// recipe's run, once its arguments satisfy its own definition (a refusal is
// told to that definition's observers, as Execute would). It first tells
// the definition to the Definition listeners of ctx ([Listeners]).
func (s *Session) admitStep(ctx context.Context, call Call) error {
	run, inRecipe := RecipeRunFrom(ctx)
	parent, declared := s.LookupTool(run.Tool)
	if !inRecipe || !declared || parent.Recipe == nil {
		if len(s.tools) == 0 {
			return fmt.Errorf("%w: %q is not available in this session (no tools are)", ErrUnknownTool, call.Name)
		}
		return fmt.Errorf("%w: %q is not available in this session (available: %s)", ErrUnknownTool, call.Name, toolNames(s.tools))
	}
	tool, found, err := guardedLookup(s.r, call.Name)
	if err != nil || !found {
		return err // not listed: the resolver answers for it
	}
	TellDefinition(ctx, tool) // wrappers above could not find it
	if call.Arguments == nil {
		call.Arguments = map[string]any{}
	}
	if call, res, refused := admit(ctx, tool, call); refused {
		TellObservers(withSession(ctx, s.values), Observation{Kind: ObservedRefused, Call: call, Tool: tool, Result: res})
		return res.Err
	}
	return nil
}

// Filter returns a resolver that lists and resolves only the tools of r for
// which keep returns true; the others are neither listed nor callable, not
// even as a recipe's steps. The choice is made once, from r.Tools() at the
// time of the call. The kept definitions pass through unchanged.
//
// A name r did not list at all is refused too, except as a step of a kept
// recipe's run: it is then r's to answer (a [Session] lists only its
// declared tools, yet runs the undeclared steps of a declared recipe).
func Filter(r Resolver, keep func(Tool) bool) Resolver {
	f := &filtered{r: r, kept: map[string]Tool{}, dropped: map[string]struct{}{}}
	for _, t := range r.Tools() {
		if _, dup := f.kept[t.Name]; dup {
			continue
		}
		if !keep(t) {
			f.dropped[t.Name] = struct{}{}
			continue
		}
		f.kept[t.Name] = t
		f.tools = append(f.tools, t)
	}
	return f
}

// ReadOnly returns a resolver limited to the tools of r annotated ReadOnly,
// for a plan phase in which the agent must not change anything.
func ReadOnly(r Resolver) Resolver {
	return Filter(r, func(t Tool) bool { return t.Annotations != nil && t.Annotations.ReadOnly })
}

type filtered struct {
	r       Resolver
	tools   []Tool
	kept    map[string]Tool
	dropped map[string]struct{} // listed by r, refused by keep
}

func (f *filtered) Tools() []Tool { return f.tools }

func (f *filtered) LookupTool(name string) (Tool, bool) {
	t, ok := f.kept[name]
	return t, ok
}

func (f *filtered) Resolve(ctx context.Context, call Call) (string, error) {
	if content, ok, err := ResolveRecipe(ctx, f, call); ok {
		return content, err
	}
	if _, ok := f.kept[call.Name]; !ok && !f.keptStep(ctx, call.Name) {
		return "", fmt.Errorf("%w: %s", ErrUnknownTool, call.Name)
	}
	return f.r.Resolve(ctx, call)
}

// keptStep reports whether name, which r did not list, is called as a step
// of a kept recipe's run.
func (f *filtered) keptStep(ctx context.Context, name string) bool {
	if _, refused := f.dropped[name]; refused {
		return false
	}
	run, inRecipe := RecipeRunFrom(ctx)
	parent, kept := f.kept[run.Tool]
	return inRecipe && kept && parent.Recipe != nil
}

// toolNames joins the tools' names with ", ".
func toolNames(tools []Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}

// withSession returns ctx with values as its scope's Session.
func withSession(ctx context.Context, values map[string]any) context.Context {
	return WithScope(ctx, func(s *Scope) { s.Session = values })
}
