package llmtoolkit

import "context"

// subAgentWrappersKey keys the wrappers a sub-agent's resolver gets.
type subAgentWrappersKey struct{}

// WithSubAgentWrapper returns a context whose sub-agents (agent's
// spawn_agent, or any tool that runs an agent of its own on behalf of a
// call) have their resolver wrapped by wrap, so that a wrapper of the
// parent's stack that must see every call, such as trace's Recorder, sees
// the sub-agent's calls too without the host wiring it twice. A wrapper
// puts itself on the context of each call it resolves; the tool that
// starts the sub-agent applies them with [WrapForSubAgent]. wrap must
// return its argument unchanged when it already wraps it (so that a
// resolver the host wrapped itself is not wrapped again).
func WithSubAgentWrapper(ctx context.Context, wrap func(Resolver) Resolver) context.Context {
	if wrap == nil {
		return ctx
	}
	prev, _ := ctx.Value(subAgentWrappersKey{}).([]func(Resolver) Resolver)
	// A new slice each time: contexts that share a parent never share
	// appends.
	next := make([]func(Resolver) Resolver, len(prev), len(prev)+1)
	copy(next, prev)
	return context.WithValue(ctx, subAgentWrappersKey{}, append(next, wrap))
}

// WrapForSubAgent returns r wrapped by the wrappers ctx carries
// ([WithSubAgentWrapper]), nested as they are in the parent's stack: the
// one put on the context last (the innermost) wraps r first. A nil r stays
// nil.
func WrapForSubAgent(ctx context.Context, r Resolver) Resolver {
	if r == nil {
		return nil
	}
	wraps, _ := ctx.Value(subAgentWrappersKey{}).([]func(Resolver) Resolver)
	for i := len(wraps) - 1; i >= 0; i-- {
		r = wraps[i](r)
	}
	return r
}
