package trace

import (
	"context"
	"math"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
)

// CostReporter is implemented by a Display payload that says what its call
// spent on model calls of its own: agent.SubAgentPayload, for the run of
// the sub-agent a spawn_agent call started. A [Recorder] writes the last
// such payload a call shows ([llmtoolkit.Show]) in the row's cost_usd and
// unpriced_calls columns; a call that shows none leaves them NULL.
type CostReporter interface {
	// ReportedCost returns what the call's model calls cost in US dollars
	// and how many of them had no price (left out of usd).
	ReportedCost() (usd float64, unpricedCalls int)
}

// shownCost keeps what a call reported it spent. A tool may show from
// any goroutine.
type shownCost struct {
	mu       sync.Mutex
	set      bool
	cost     float64
	unpriced int
}

// shown returns the Show listener of a call made with ctx: it notes a
// reported cost and, outside an [llmtoolkit.Execute] (which tells its own
// listener itself), passes the Display on to the listener ctx had.
func (c *shownCost) shown(ctx context.Context) func(llmtoolkit.Display) {
	prev := llmtoolkit.ListenersFrom(ctx).Show
	if _, inExecute := llmtoolkit.CallFrom(ctx); inExecute || prev == nil {
		return c.note
	}
	return func(d llmtoolkit.Display) {
		c.note(d)
		prev(d)
	}
}

// note keeps d's cost when its payload reports one.
func (c *shownCost) note(d llmtoolkit.Display) {
	r, ok := d.Payload.(CostReporter)
	if !ok || r == nil {
		return
	}
	usd, unpriced := r.ReportedCost()
	if math.IsNaN(usd) || math.IsInf(usd, 0) || usd < 0 || unpriced < 0 {
		// Not an amount: recorded as no price at all rather than a
		// row that cannot be written.
		usd, unpriced = 0, max(unpriced, 1)
	}
	c.mu.Lock()
	c.set, c.cost, c.unpriced = true, usd, unpriced
	c.mu.Unlock()
}

// usd returns the reported cost, nil when none was.
func (c *shownCost) usd() *float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.set {
		return nil
	}
	v := c.cost
	return &v
}

// unpricedCalls returns the reported count of unpriced calls.
func (c *shownCost) unpricedCalls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.unpriced
}
