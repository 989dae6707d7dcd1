package llmtoolkit

import "context"

// subAgentWrappersKey keys the wrappers a sub-agent's resolver gets.
type subAgentWrappersKey struct{}

// WrapForSubAgent returns r wrapped by the wrappers ctx carries
// (its SubAgent [Listeners]), nested as they are in the parent's stack: the
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
