package agentloop

import (
	"context"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// offered is the resolver the loop executes calls on when Options.Tools is
// set: it lists those tools (so that llmtoolkit.Execute validates arguments
// against their schemas even when the resolver is a ResolverFunc that lists
// none) and delegates everything else to the host's resolver.
type offered struct {
	r      llmtoolkit.Resolver // may be nil
	tools  []llmtoolkit.Tool
	byName map[string]int
}

func newOffered(r llmtoolkit.Resolver, tools []llmtoolkit.Tool) *offered {
	o := &offered{r: r, tools: tools, byName: make(map[string]int, len(tools))}
	for i, t := range tools {
		if _, dup := o.byName[t.Name]; !dup {
			o.byName[t.Name] = i
		}
	}
	return o
}

func (o *offered) has(name string) bool {
	_, ok := o.byName[name]
	return ok
}

// Tools lists the offered tools.
func (o *offered) Tools() []llmtoolkit.Tool { return o.tools }

// LookupTool returns the host resolver's definition of name when it lists
// one, since that definition carries the per-tool facts (recipe, sensitive
// fields, observers) that the offered copy may lack; else the offered one.
// (The steps of a recipe may call tools that are not offered to the model.)
func (o *offered) LookupTool(name string) (llmtoolkit.Tool, bool) {
	if o.r != nil {
		if t, ok := llmtoolkit.FindTool(o.r, name); ok {
			return t, true
		}
	}
	if i, ok := o.byName[name]; ok {
		return o.tools[i], true
	}
	return llmtoolkit.Tool{}, false
}

// Resolve delegates to the host's resolver.
func (o *offered) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if o.r == nil {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	return o.r.Resolve(ctx, call)
}

// notOffered is the result of a call for a tool the model was not offered.
func (o *offered) notOffered(call llmtoolkit.Call) llmtoolkit.Result {
	names := make([]string, len(o.tools))
	for i, t := range o.tools {
		names[i] = t.Name
	}
	content := fmt.Sprintf("unknown tool: %q. Available tools: %s", call.Name, strings.Join(names, ", "))
	if len(names) == 0 {
		content = fmt.Sprintf("unknown tool: %q. No tools are available", call.Name)
	}
	return llmtoolkit.Result{
		ToolCallID: call.ID, Name: call.Name, Content: content, IsError: true,
		Err: fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name),
	}
}
