package llmtoolkit

import "context"

// Defer returns r with every tool it lists marked [Tool.Deferred]: its
// definitions are offered to a model only once a tool search finds them
// (for example every tool of an MCP server: Defer(client)). The other
// facts of each definition pass through unchanged, calls go to r as they
// are, and the list is read from r on every Tools call, so a resolver whose
// list changes (an MCP Refresh) is followed. A nil r gives nil.
func Defer(r Resolver) Resolver {
	if r == nil {
		return nil
	}
	return deferredResolver{r: r}
}

// deferredResolver marks r's definitions deferred: see [Defer].
type deferredResolver struct{ r Resolver }

// Tools lists r's tools, each marked deferred.
func (d deferredResolver) Tools() []Tool {
	src := d.r.Tools()
	out := make([]Tool, len(src))
	for i, t := range src {
		t.Deferred = true
		out[i] = t
	}
	return out
}

// LookupTool finds name through r and marks it deferred.
func (d deferredResolver) LookupTool(name string) (Tool, bool) {
	t, ok := FindTool(d.r, name)
	if ok {
		t.Deferred = true
	}
	return t, ok
}

// Resolve runs the call on r.
func (d deferredResolver) Resolve(ctx context.Context, call Call) (string, error) {
	return d.r.Resolve(ctx, call)
}

// SplitDeferred returns the tools of list not marked [Tool.Deferred] and
// those marked, each in list order. Neither shares memory with list.
func SplitDeferred(list []Tool) (offered, deferred []Tool) {
	for _, t := range list {
		if t.Deferred {
			deferred = append(deferred, t)
		} else {
			offered = append(offered, t)
		}
	}
	return offered, deferred
}
