package agent

import (
	"context"

	"github.com/llmtoolkit/llmtoolkit"
)

// Guard wraps r so that every call is checked before it runs (see the
// package doc for the order) and the PostToolUse hooks see its outcome.
// Tools lists what the current mode offers: in the plan mode, the
// read-only tools and the plan-mode tool; in the others, every tool but the
// plan-mode tool; so after a mode switch the model is offered the new list
// in its next turn (agentloop reads the Resolver's list every iteration).
//
// Put a trace.Recorder outside the guard (trace.Record(perms.Guard(r),
// db)) so that refused calls are recorded like any call. Definitions are
// passed on unchanged.
func (p *Permissions) Guard(r llmtoolkit.Resolver) llmtoolkit.Resolver {
	return &guard{p: p, r: r}
}

type guard struct {
	p *Permissions
	r llmtoolkit.Resolver
}

// Tools lists the tools the current mode offers.
func (g *guard) Tools() []llmtoolkit.Tool {
	mode := g.p.Mode()
	all := g.r.Tools()
	out := make([]llmtoolkit.Tool, 0, len(all))
	for _, t := range all {
		if g.p.offers(mode, t) {
			out = append(out, t)
		}
	}
	return out
}

// LookupTool finds name among the tools the current mode offers.
func (g *guard) LookupTool(name string) (llmtoolkit.Tool, bool) {
	t, ok := lookup(g.r, name)
	if !ok || !g.p.offers(g.p.Mode(), t) {
		return llmtoolkit.Tool{}, false
	}
	return t, true
}

// Resolve checks call, runs it on the wrapped resolver, and runs the
// PostToolUse or PostToolUseFailure hooks.
func (g *guard) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	tool, found := lookup(g.r, call.Name)
	call, err := g.p.check(ctx, call, tool, found)
	if err != nil {
		return "", err
	}
	content, err := g.r.Resolve(ctx, call)
	if err != nil {
		return "", g.p.postFailure(ctx, call, err)
	}
	return g.p.post(ctx, call, content)
}

// lookup finds name among r's tools.
func lookup(r llmtoolkit.Resolver, name string) (llmtoolkit.Tool, bool) {
	if l, ok := r.(llmtoolkit.ToolLookup); ok {
		return l.LookupTool(name)
	}
	for _, t := range r.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return llmtoolkit.Tool{}, false
}
