package agent

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrSubAgentBudget is wrapped by the error of a spawn_agent call past its
// run's budget ([SubAgentConfig.MaxSubAgents], and
// [SubAgentConfig.MaxConcurrentSubAgents] for a sub-agent's own spawns).
// It wraps [llmtoolkit.ErrLimitReached]: the refusal is the host's, so
// agentloop's circuit breaker does not count it and the model goes on.
var ErrSubAgentBudget error = &limitError{"agent: the run's sub-agent budget is spent"}

// limitError is a sentinel of a limit the host set: it wraps
// llmtoolkit.ErrLimitReached.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// Unwrap returns [llmtoolkit.ErrLimitReached].
func (e *limitError) Unwrap() error { return llmtoolkit.ErrLimitReached }

// lineage is what a spawn_agent call carries on its context: the
// permissions of every guard it went through, outermost first. Its
// sub-agent runs under all of them.
type lineage struct {
	perms []*Permissions
}

type lineageKey struct{}

// lineageFrom returns the permissions the call made with ctx went through.
func lineageFrom(ctx context.Context) []*Permissions {
	l, _ := ctx.Value(lineageKey{}).(*lineage)
	if l == nil {
		return nil
	}
	return l.perms
}

// within returns ctx saying that the call went through p's guard, unless it
// says so already. own is p's one-entry lineage, made once.
func (p *Permissions) within(ctx context.Context, own *lineage) context.Context {
	outer := lineageFrom(ctx)
	switch {
	case slices.Contains(outer, p):
		return ctx
	case len(outer) == 0 && own != nil:
		return context.WithValue(ctx, lineageKey{}, own)
	}
	return context.WithValue(ctx, lineageKey{}, &lineage{perms: append(slices.Clip(outer), p)})
}

// guardFor wraps a sub-agent's tools in the guards of its parent's lineage
// and in its own permissions: the outermost parent checks first, and each
// can only refuse more.
func guardFor(tools llmtoolkit.Resolver, parents []*Permissions, own *Permissions) llmtoolkit.Resolver {
	if own != nil && !slices.Contains(parents, own) {
		tools = own.Guard(tools)
	}
	for i := len(parents) - 1; i >= 0; i-- {
		tools = parents[i].Guard(tools)
	}
	return tools
}

// budget counts the sub-agents of one run: how many started, how many run.
type budget struct {
	mu      sync.Mutex
	started int
	running int
	freed   chan struct{} // closed, and replaced, when one ends
}

// acquire admits one more sub-agent within max in all and maxRunning at
// once, and returns the function that says it ended. A call at depth 0
// waits for a running one to end (until ctx is done); a deeper one, made by
// a sub-agent that holds a place itself, is refused at once instead, so
// that sub-agents never wait for each other.
func (b *budget) acquire(ctx context.Context, depth, max, maxRunning int) (func(), error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.started >= max {
		return nil, fmt.Errorf("%w: it has started %d sub-agents, its limit; do the rest of the work yourself", ErrSubAgentBudget, b.started)
	}
	b.started++
	for b.running >= maxRunning {
		if depth > 0 {
			b.started--
			return nil, fmt.Errorf("%w: %d sub-agents are running, the limit at once; do this task yourself, or spawn it later", ErrSubAgentBudget, b.running)
		}
		if b.freed == nil {
			b.freed = make(chan struct{})
		}
		freed := b.freed
		b.mu.Unlock()
		select {
		case <-freed:
			b.mu.Lock()
		case <-ctx.Done():
			b.mu.Lock()
			b.started--
			return nil, fmt.Errorf("waiting for one of the %d running sub-agents to end: %w", b.running, ctx.Err())
		}
	}
	b.running++
	return b.release, nil
}

// release says that a sub-agent ended.
func (b *budget) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.running--
	if b.freed != nil {
		close(b.freed)
		b.freed = nil
	}
}
