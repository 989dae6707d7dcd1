package genkitadapter

import (
	"context"
	"sync"

	"github.com/firebase/genkit/go/ai"

	"github.com/llmtoolkit/llmtoolkit"
)

// turnCounterKey carries the [turnCounter] [CountTurns] bound.
type turnCounterKey struct{}

// turnCounter numbers one generation's model calls. turn is the scope
// [llmtoolkit.Scope.StartTurn] made at the current model call, so that
// every tool call of one turn shares one [llmtoolkit.Turn].
type turnCounter struct {
	mu   sync.Mutex
	n    int
	turn *llmtoolkit.Scope
}

// CountTurns returns a context for genkit's Generate that numbers its model
// turns, and the middleware that advances the count (pass it with
// ai.WithMiddleware). Each tool call the adapted tools ([Tools]) run after
// the model's n-th answer sees iteration n ([llmtoolkit.Scope].Iteration),
// and the calls of one answer share one [llmtoolkit.Turn], as in
// agentloop. genkit itself tells a tool nothing of the turn it belongs to.
//
// Use one pair per Generate: the count is the context's, not the
// middleware's.
func CountTurns(ctx context.Context) (context.Context, ai.ModelMiddleware) {
	c := &turnCounter{}
	mw := func(next ai.ModelFunc) ai.ModelFunc {
		return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			resp, err := next(ctx, req, cb)
			c.mu.Lock()
			c.n++
			var turn llmtoolkit.Scope
			turn.StartTurn(c.n)
			c.turn = &turn
			c.mu.Unlock()
			return resp, err
		}
	}
	return context.WithValue(ctx, turnCounterKey{}, c), mw
}

// withTurn returns ctx with the iteration and turn of its [turnCounter],
// if it has one and the model has answered, the rest of ctx's scope (its
// session, run and agent) as it is; else ctx unchanged.
func withTurn(ctx context.Context) context.Context {
	c, ok := ctx.Value(turnCounterKey{}).(*turnCounter)
	if !ok {
		return ctx
	}
	c.mu.Lock()
	turn := c.turn
	c.mu.Unlock()
	if turn == nil {
		return ctx
	}
	return llmtoolkit.WithScope(ctx, func(s *llmtoolkit.Scope) { s.Iteration, s.Turn = turn.Iteration, turn.Turn })
}
