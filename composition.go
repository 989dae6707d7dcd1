package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
)

// Composition joins several resolvers into one: the first resolver that
// lists a tool wins. Build it with [Compose]. It implements [Resolver] and
// [ToolLookup], and may itself be composed. It lists the definitions it was
// given unchanged, so every per-tool fact (recipes, sensitive fields,
// observers) passes through it.
type Composition struct {
	resolvers []Resolver
	index     map[string][]int // tool name -> resolvers listing it, in order
	tools     []Tool           // each name once, first resolver's definition
	byName    map[string]int   // tool name -> position in tools
}

// Compose joins resolvers, first match wins. The tool lists are read once,
// here, into a name index: dispatch is a map lookup, not a trial of each
// resolver in turn.
//
// A call goes to the first resolver listing its name; if that resolver
// answers with an error wrapping [ErrUnknownTool], the next one listing the
// name is tried. A call for a name nobody lists is offered to each resolver
// in order, since a resolver may resolve names it does not list. Nil
// resolvers are skipped.
func Compose(resolvers ...Resolver) *Composition {
	c := &Composition{index: map[string][]int{}, byName: map[string]int{}}
	for _, r := range resolvers {
		if r == nil {
			continue
		}
		i := len(c.resolvers)
		c.resolvers = append(c.resolvers, r)
		for _, t := range r.Tools() {
			if idx := c.index[t.Name]; len(idx) > 0 && idx[len(idx)-1] == i {
				continue // a resolver listing a name twice
			}
			c.index[t.Name] = append(c.index[t.Name], i)
			if _, seen := c.byName[t.Name]; !seen {
				c.byName[t.Name] = len(c.tools)
				c.tools = append(c.tools, t)
			}
		}
	}
	return c
}

// Tools lists every tool name once, in resolver order, the first resolver's
// definition winning (providers reject duplicate names). The slice is
// shared: do not modify it.
func (c *Composition) Tools() []Tool { return c.tools }

// LookupTool returns the definition that dispatch would use for name.
func (c *Composition) LookupTool(name string) (Tool, bool) {
	i, ok := c.byName[name]
	if !ok {
		return Tool{}, false
	}
	return c.tools[i], true
}

// Resolve dispatches call to the first resolver that takes it.
func (c *Composition) Resolve(ctx context.Context, call Call) (string, error) {
	if idx, ok := c.index[call.Name]; ok {
		for _, i := range idx {
			out, err := c.resolvers[i].Resolve(ctx, call)
			if err == nil || !errors.Is(err, ErrUnknownTool) {
				return out, err
			}
		}
	} else {
		for _, r := range c.resolvers {
			out, err := r.Resolve(ctx, call)
			if err == nil || !errors.Is(err, ErrUnknownTool) {
				return out, err
			}
		}
	}
	return "", fmt.Errorf("%w: %s", ErrUnknownTool, call.Name)
}
