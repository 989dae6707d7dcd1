package genkitadapter

import (
	"context"
	"sync"

	"github.com/firebase/genkit/go/ai"

	"github.com/llmtoolkit/llmtoolkit"
)

// turnCounterKey carries the [turnCounter] [CountTurns] bound.
type turnCounterKey struct{}

// turnCounter numbers one generation's model calls. turn is a context made
// by [llmtoolkit.Scope].Iteration at the current model call, so that every
// tool call of one turn shares one [llmtoolkit.Turn].
type turnCounter struct {
	mu   sync.Mutex
	n    int
	turn context.Context
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
			c.turn = llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.StartTurn(c.n) })
			c.mu.Unlock()
			return resp, err
		}
	}
	return context.WithValue(ctx, turnCounterKey{}, c), mw
}

// withTurn returns ctx with the current turn of its [turnCounter], if it
// has one and the model has answered; else ctx unchanged.
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
	return turnContext{Context: ctx, turn: turn}
}

// turnContext is ctx with the iteration of turn: turn holds nothing else
// (it is made from context.Background), so every other value, the deadline
// and the cancellation stay ctx's.
type turnContext struct {
	context.Context
	turn context.Context
}

// Value answers from the turn first.
func (c turnContext) Value(key any) any {
	if v := c.turn.Value(key); v != nil {
		return v
	}
	return c.Context.Value(key)
}
