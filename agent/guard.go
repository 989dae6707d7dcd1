package agent

import (
	"context"
	"slices"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/readcheck"
	"github.com/llmtoolkit/llmtoolkit/internal/writecheck"
)

// Guard wraps r so that every call is checked before it runs (see the
// package doc for the order) and the PostToolUse hooks see its outcome.
// Tools lists what the current mode offers: in the plan mode, the
// read-only tools and the plan-mode tool; in the others, every tool but the
// plan-mode tool; so after a mode switch the model is offered the new list
// in its next turn (agentloop reads the Resolver's list every iteration).
//
// A call the guard refuses never reaches r: the guard tells the tool's
// [llmtoolkit.Tool.Observers] of it (as [llmtoolkit.Execute] does for the
// calls it refuses), so a trace.Recorder inside the guard records it like
// any call: perms.Guard(trace.Record(tools, db)). A Recorder outside the
// guard works too (it lists the guard's tools as they are now, and records
// refusals as errors of the guard). Definitions are passed on unchanged.
//
// A tool with a [llmtoolkit.Tool.Recipe] is listed with the guard's check
// added to its [llmtoolkit.Tool.Gates]: [llmtoolkit.Execute] runs a recipe's
// plan itself, without Resolve, and asks the gate first, so the recipe call
// goes through the whole check before its plan runs, whatever wraps the
// guard; its steps are then checked one by one like any call. (PostToolUse
// hooks see the steps, not the recipe call.)
func (p *Permissions) Guard(r llmtoolkit.Resolver) llmtoolkit.Resolver {
	g := &guard{p: p, r: r}
	g.gate = g.checkRecipe
	return g
}

type guard struct {
	p    *Permissions
	r    llmtoolkit.Resolver
	gate llmtoolkit.Gate // g.checkRecipe, made once
}

// gated returns t, with the guard's gate added when it is a recipe.
func (g *guard) gated(t llmtoolkit.Tool) llmtoolkit.Tool {
	if t.Recipe != nil {
		t.Gates = append(slices.Clip(t.Gates), g.gate)
	}
	return t
}

// checkRecipe checks a recipe call before Execute runs its plan.
func (g *guard) checkRecipe(ctx context.Context, call llmtoolkit.Call) (llmtoolkit.Call, error) {
	tool, found := llmtoolkit.FindTool(g.r, call.Name)
	call, err := g.p.check(ctx, call, tool, found)
	if d, ok := err.(*pendingError); ok {
		return call, d.err // Execute reports it to the observers as a refusal
	}
	return call, err
}

// Tools lists the tools the current mode offers.
func (g *guard) Tools() []llmtoolkit.Tool {
	mode := g.p.Mode()
	all := g.r.Tools()
	out := make([]llmtoolkit.Tool, 0, len(all))
	for _, t := range all {
		if g.p.offers(mode, t) {
			out = append(out, g.gated(t))
		}
	}
	return out
}

// LookupTool finds name among the tools the current mode offers.
func (g *guard) LookupTool(name string) (llmtoolkit.Tool, bool) {
	t, ok := llmtoolkit.FindTool(g.r, name)
	if !ok || !g.p.offers(g.p.Mode(), t) {
		return llmtoolkit.Tool{}, false
	}
	return g.gated(t), true
}

// Resolve checks call, runs it on the wrapped resolver, and runs the
// PostToolUse or PostToolUseFailure hooks.
func (g *guard) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if content, ok, err := llmtoolkit.ResolveRecipe(ctx, g, call); ok {
		return content, err // a recipe reached by Resolve: its steps are checked here
	}
	start := time.Now()
	tool, found := llmtoolkit.FindTool(g.r, call.Name)
	checked, cmds, err := g.p.checkCommands(ctx, call, tool, found)
	if err != nil {
		if d, ok := err.(*pendingError); ok {
			return "", d.err // undecided: not a refusal
		}
		if found {
			refused(ctx, tool, call, err, time.Since(start))
		}
		return "", err
	}
	call = checked
	if call.Name == SpawnToolName {
		ctx = g.p.within(ctx, g.p.own) // the sub-agent runs under these permissions
	}
	if globs, hidden := excludedPaths(g.p.deny, call.Name, tool), g.hiddenPaths(); len(globs) > 0 || len(hidden) > 0 {
		// What the deny rules forbid a direct call, the tool's walks
		// leave out (grep, glob, tree and list_directory of codetools);
		// what they forbid any tool, the processes serving every tool
		// (codetools' language servers) do not see.
		ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) {
			sc.ExcludedPaths = append(sc.ExcludedPaths, globs...)
			sc.HiddenPaths = append(sc.HiddenPaths, hidden...)
		})
	}
	if _, ok := llmtoolkit.FindTool(g.r, readToolName); ok {
		// What serves every call (codetools' language servers) hides what
		// read_file would be refused, whatever the rule's spelling.
		ctx = readcheck.With(ctx, readcheck.Check{Key: g.p, Check: g.readCheck})
	}
	if found && g.p.Kind(tool) != KindReadOnly {
		ctx = writecheck.With(ctx, g.writeCheck(call, tool))
	}
	content, err := g.r.Resolve(ctx, call)
	if err != nil {
		return "", g.p.postFailure(ctx, call, cmds, err)
	}
	return g.p.post(ctx, call, cmds, content)
}

// writeCheck is the check of a write the tool of call decides on while it
// runs (the files a rename edits): each path is checked as multi_edit's
// call {"path": PATH} would be (deny rules, allow rules, hooks, the
// callback, in the mode of the run), or, with no multi_edit among the
// tools, as call itself naming PATH.
func (g *guard) writeCheck(call llmtoolkit.Call, tool llmtoolkit.Tool) writecheck.Func {
	return func(ctx context.Context, path string) error {
		as, args := tool, copyArguments(call.Arguments)
		if t, ok := llmtoolkit.FindTool(g.r, "multi_edit"); ok {
			as, args = t, map[string]any{}
		}
		if args == nil {
			args = map[string]any{}
		}
		args["path"] = path
		_, err := g.p.check(ctx, llmtoolkit.Call{ID: call.ID, Name: as.Name, Arguments: args}, as, true)
		if d, ok := err.(*pendingError); ok {
			return d.err // undecided: the write is not allowed now
		}
		return err
	}
}

// readToolName is the tool whose check is the read check
// (internal/readcheck).
const readToolName = "read_file"

// readCheck is the read check (internal/readcheck): path is checked as
// read_file's call {"path": PATH} would be (deny rules, allow rules,
// hooks, the callback, in the mode of ctx's run); undecided is refused.
// Nothing is told to the observers: it is no call.
func (g *guard) readCheck(ctx context.Context, path string) error {
	tool, ok := llmtoolkit.FindTool(g.r, readToolName)
	if !ok {
		return nil
	}
	_, err := g.p.check(ctx, llmtoolkit.Call{Name: readToolName, Arguments: map[string]any{"path": path}}, tool, true)
	if d, ok := err.(*pendingError); ok {
		return d.err // undecided: not readable now
	}
	return err
}

// refused tells tool's observers of a call the guard refused.
func refused(ctx context.Context, tool llmtoolkit.Tool, call llmtoolkit.Call, err error, d time.Duration) {
	llmtoolkit.TellObservers(ctx, llmtoolkit.Observation{
		Kind: llmtoolkit.ObservedRefused, Call: call, Tool: tool, Duration: d,
		Result: llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name, Content: err.Error(), IsError: true, Err: err},
	})
}

// hiddenPaths returns the globs of the deny rules on an argument some
// tool of the resolver declares as a path, whichever tool they name
// (llmtoolkit.Scope.HiddenPaths).
func (g *guard) hiddenPaths() []string {
	var withGlob []*rule
	for i := range g.p.deny {
		if g.p.deny[i].src.Glob != "" {
			withGlob = append(withGlob, &g.p.deny[i])
		}
	}
	if len(withGlob) == 0 {
		return nil
	}
	tools := g.r.Tools()
	var out []string
	for _, r := range withGlob {
		for _, t := range tools {
			if t.Paths != nil && t.Paths.Declares(r.src.Argument) {
				if !slices.Contains(out, r.src.Glob) {
					out = append(out, r.src.Glob)
				}
				break
			}
		}
	}
	return out
}
