package llmtoolkit

import (
	"context"
	"fmt"
	"strings"
)

// PrepareSession prepares one turn: it returns the declared tools that r
// has, in declared order, and a function that resolves calls for them with
// session bound in the context (read it with [SessionFrom]).
//
// The function refuses any tool that was not declared, with an error
// wrapping [ErrUnknownTool] that says the tool is not available in this
// session. It holds no shared state, so concurrent turns with their own
// sessions never see each other's. PrepareSession returns (nil, nil) when
// declared is empty or none of the declared tools exist.
func PrepareSession(r Resolver, declared []string, session map[string]any) ([]Tool, ResolverFunc) {
	if r == nil || len(declared) == 0 {
		return nil, nil
	}
	var tools []Tool
	allowed := make(map[string]bool, len(declared))
	for _, name := range declared {
		if allowed[name] {
			continue
		}
		if t, ok := lookupTool(r, name); ok {
			tools = append(tools, t)
			allowed[name] = true
		}
	}
	if len(tools) == 0 {
		return nil, nil
	}
	return tools, func(ctx context.Context, call Call) (string, error) {
		if !allowed[call.Name] {
			return "", fmt.Errorf("%w: %q is not available in this session (available: %s)", ErrUnknownTool, call.Name, toolNames(tools))
		}
		return r.Resolve(WithSession(ctx, session), call)
	}
}

// Filter returns a resolver that lists and resolves only the tools of r for
// which keep returns true; the others are neither listed nor callable. The
// choice is made once, from r.Tools() at the time of the call.
func Filter(r Resolver, keep func(Tool) bool) Resolver {
	f := &filtered{r: r, kept: map[string]Tool{}}
	for _, t := range r.Tools() {
		if _, dup := f.kept[t.Name]; dup || !keep(t) {
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
	r     Resolver
	tools []Tool
	kept  map[string]Tool
}

func (f *filtered) Tools() []Tool { return f.tools }

func (f *filtered) LookupTool(name string) (Tool, bool) {
	t, ok := f.kept[name]
	return t, ok
}

func (f *filtered) Resolve(ctx context.Context, call Call) (string, error) {
	if _, ok := f.kept[call.Name]; !ok {
		return "", fmt.Errorf("%w: %s", ErrUnknownTool, call.Name)
	}
	return f.r.Resolve(ctx, call)
}

func (f *filtered) DispatchRecipe(tool string) Recipe {
	if _, ok := f.kept[tool]; !ok {
		return nil
	}
	if rp, ok := f.r.(RecipeProvider); ok {
		return rp.DispatchRecipe(tool)
	}
	return nil
}

// toolNames joins the tools' names with ", ".
func toolNames(tools []Tool) string {
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Name
	}
	return strings.Join(names, ", ")
}
