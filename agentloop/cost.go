package agentloop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// ErrNoPrice is wrapped by the error of [Prices.Cost] when the table has
// no price for the model, or none for a kind of token the call used. A
// run counts such a call in [Cost.Unpriced] and names what was missing in
// [Cost.Missing]; with [Options.MaxCostUSD] set it ends the run before
// its next model call (a budget cannot be kept on calls it cannot price).
var ErrNoPrice = errors.New("agentloop: no price for the model call")

// ErrCostBudget is wrapped by a [*CostBudgetError]: the next model call
// would pass [Options.MaxCostUSD] (or the budget of a run this one is a
// sub-agent of).
var ErrCostBudget = errors.New("agentloop: the money budget would be passed")

// Price is what a model's tokens cost, in US dollars per million tokens,
// by kind. A kind the call used whose price is 0 is a missing price, never
// a free one ([ErrNoPrice]): Reasoning is usually the Output price, and
// must be given for a model that reports reasoning tokens apart
// (OpenAI's, Gemini's).
type Price struct {
	// Input prices the prompt's tokens neither read from nor written to
	// the cache.
	Input float64 `json:"input"`
	// Output prices the generated tokens that are not reasoning.
	Output float64 `json:"output"`
	// CacheRead prices the prompt's tokens read from the cache.
	CacheRead float64 `json:"cache_read"`
	// CacheWrite prices the prompt's tokens written to the cache.
	CacheWrite float64 `json:"cache_write"`
	// Reasoning prices the reasoning tokens.
	Reasoning float64 `json:"reasoning"`
}

// Prices is a host's price table: a [Price] by model name, as the
// provider names the model in its answers ([Response.Model]) or as the
// host names it ([Options.Model]).
type Prices map[string]Price

// Cost returns what one model call cost in US dollars: the provider's own
// figure when its answer reports one ([Usage.CostUSD]), else u priced by
// the table: the uncached prompt (the prompt less its cache reads and
// writes) at Input, CacheReadTokens at CacheRead, CacheWriteTokens at
// CacheWrite, ReasoningTokens at Reasoning and the rest of OutputTokens
// at Output. An error wrapping [ErrNoPrice] names what had no price; the
// cost is then 0 and must not be taken for one.
func (p Prices) Cost(model string, u Usage) (float64, error) {
	if u.CostUSD != nil {
		return *u.CostUSD, nil
	}
	price, ok := p[model]
	if !ok {
		if model == "" {
			return 0, fmt.Errorf("%w: the answer names no model and Options.Model is empty", ErrNoPrice)
		}
		return 0, fmt.Errorf("%w: model %q is not in the price table", ErrNoPrice, model)
	}
	uncached := max(u.Prompt()-u.CacheReadTokens-u.CacheWriteTokens, 0)
	output := max(u.OutputTokens-u.ReasoningTokens, 0)
	var usd float64
	var missing []string
	for _, k := range []struct {
		name   string
		tokens int
		price  float64
	}{
		{"input", uncached, price.Input},
		{"output", output, price.Output},
		{"cache_read", u.CacheReadTokens, price.CacheRead},
		{"cache_write", u.CacheWriteTokens, price.CacheWrite},
		{"reasoning", u.ReasoningTokens, price.Reasoning},
	} {
		if k.tokens == 0 {
			continue
		}
		if k.price <= 0 {
			missing = append(missing, k.name)
			continue
		}
		usd += float64(k.tokens) * k.price / 1e6
	}
	if missing != nil {
		return 0, &noPriceError{model: model, kinds: missing}
	}
	return usd, nil
}

// noPriceError names the kinds of token a model has no price for.
type noPriceError struct {
	model string
	kinds []string
}

func (e *noPriceError) Error() string {
	return fmt.Sprintf("agentloop: no price for the model call: model %q has no %v price in the table", e.model, e.kinds)
}

func (e *noPriceError) Unwrap() error { return ErrNoPrice }

// missingNames returns what err says had no price, as Cost.Missing names
// them: "MODEL" or "MODEL: KIND".
func missingNames(model string, err error) []string {
	var np *noPriceError
	if errors.As(err, &np) {
		names := make([]string, len(np.kinds))
		for i, k := range np.kinds {
			names[i] = model + ": " + k
		}
		return names
	}
	return []string{model}
}

// Cost sums what model calls cost. Without a price table or a money
// budget, pricing is not asked for: a call without a cost in its answer
// counts neither in Calls nor in Unpriced.
type Cost struct {
	// USD is the cost of the priced calls, in US dollars.
	USD float64 `json:"usd"`
	// Calls is how many model calls were priced (by the table or by the
	// provider's own figure).
	Calls int `json:"calls"`
	// Unpriced is how many model calls could not be priced; their cost is
	// not in USD, which is then less than what was spent.
	Unpriced int `json:"unpriced,omitempty"`
	// Missing names, sorted and each once, what had no price: a model
	// ("gpt-x") or a kind of token of one ("gpt-x: cache_write"); "" is a
	// call whose model was not named.
	Missing []string `json:"missing,omitempty"`
}

// Add returns the sum of c and d.
func (c Cost) Add(d Cost) Cost {
	s := Cost{USD: c.USD + d.USD, Calls: c.Calls + d.Calls, Unpriced: c.Unpriced + d.Unpriced}
	if len(c.Missing)+len(d.Missing) > 0 {
		s.Missing = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(c.Missing), d.Missing...))))
	}
	return s
}

// CostBudgetError reports the model call a run did not make because it
// would have passed a money budget. It wraps [ErrCostBudget].
type CostBudgetError struct {
	// Iteration is the iteration whose model call was not made.
	Iteration int
	// SpentUSD is what the run whose budget it is had spent, its
	// sub-agents included (and the calls in flight, by their estimates).
	SpentUSD float64
	// EstimateUSD is the estimate of the call (see [Options.MaxCostUSD]).
	EstimateUSD float64
	// LimitUSD is the budget.
	LimitUSD float64
}

// Error says what was spent, what the call would cost and the budget.
func (e *CostBudgetError) Error() string {
	return fmt.Sprintf("agentloop: the model call of iteration %d was not made: $%.6f spent and about $%.6f more would pass the money budget of $%.6f (Options.MaxCostUSD of this run or of a run it is nested in)",
		e.Iteration, e.SpentUSD, e.EstimateUSD, e.LimitUSD)
}

// Unwrap returns [ErrCostBudget].
func (e *CostBudgetError) Unwrap() error { return ErrCostBudget }

// Meter sums the cost of the runs it is given to ([Options.Meter]), their
// sub-agents' included; a host keeps one across the turns of a
// conversation and reads it after each. Its zero value is ready; it is
// safe for concurrent use.
type Meter struct {
	mu   sync.Mutex
	cost Cost
}

// Cost returns what the meter has summed so far.
func (m *Meter) Cost() Cost {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.cost
	c.Missing = slices.Clone(c.Missing)
	return c
}

func (m *Meter) add(c Cost) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cost = m.cost.Add(c)
}

// runMeter is one run's spend and budget: its own calls, its
// sub-agents', and the estimates of the calls in flight.
type runMeter struct {
	mu       sync.Mutex
	cost     Cost
	limit    float64 // 0: none
	reserved float64
	sink     *Meter // Options.Meter of that run, or nil
}

// costChain is what a run puts on its tool calls' contexts: the meters of
// the runs it is nested in, outermost first, then its own; and the price
// table a sub-agent's run inherits.
type costChain struct {
	meters []*runMeter
	prices Prices
}

type costChainKey struct{}

func costChainFrom(ctx context.Context) *costChain {
	c, _ := ctx.Value(costChainKey{}).(*costChain)
	return c
}

// reserve checks that est more stays within every budget of the chain and
// sets it aside while the call is in flight; it returns the error of the
// first budget it would pass.
func (c *costChain) reserve(n int, est float64) error {
	for i, m := range c.meters {
		m.mu.Lock()
		if m.limit > 0 && m.cost.USD+m.reserved+est > m.limit {
			err := &CostBudgetError{Iteration: n, SpentUSD: m.cost.USD + m.reserved, EstimateUSD: est, LimitUSD: m.limit}
			m.mu.Unlock()
			c.settle(i, est, Cost{}) // give back what was set aside
			return err
		}
		m.reserved += est
		m.mu.Unlock()
	}
	return nil
}

// settle gives back est on the first n meters and adds the call's cost.
func (c *costChain) settle(n int, est float64, cost Cost) {
	for _, m := range c.meters[:n] {
		m.mu.Lock()
		m.reserved = max(m.reserved-est, 0)
		m.cost = m.cost.Add(cost)
		m.mu.Unlock()
		if m.sink != nil && (cost.Calls > 0 || cost.Unpriced > 0) {
			m.sink.add(cost)
		}
	}
}

// budgeted reports whether a run of the chain has a money budget.
func (c *costChain) budgeted() bool {
	for _, m := range c.meters {
		if m.limit > 0 {
			return true
		}
	}
	return false
}

// costs is the cost state of one loop.
type costs struct {
	chain     *costChain // the run's and its parents'; own meter last
	own       *runMeter
	maxOutput int // the most output tokens an answer of this run had
	model     string
}

func (l *loop) initCosts(ctx context.Context) context.Context {
	parent := costChainFrom(ctx)
	prices := l.opts.Prices
	var meters []*runMeter
	if parent != nil {
		meters = slices.Clone(parent.meters)
		if prices == nil {
			prices = parent.prices
		}
	}
	l.costs.own = &runMeter{limit: l.opts.MaxCostUSD, sink: l.opts.Meter}
	l.costs.chain = &costChain{meters: append(meters, l.costs.own), prices: prices}
	l.costs.model = l.opts.Model
	return context.WithValue(ctx, costChainKey{}, l.costs.chain)
}

// estimate is the cost the next model call is taken to have before it is
// made (see Options.MaxCostUSD): promptTokens at the Input price, plus the
// most output tokens an answer of this run had at the Output price.
func (l *loop) estimate(promptTokens int) float64 {
	p, ok := l.costs.chain.prices[l.costs.model]
	if !ok {
		return 0
	}
	return (float64(promptTokens)*p.Input + float64(l.costs.maxOutput)*max(p.Output, p.Reasoning)) / 1e6
}

// priceCall prices resp, adds it to the chain and Options.Meter, and
// returns it as a Cost of one call.
func (l *loop) priceCall(ctx context.Context, n int, resp Response, est float64) Cost {
	model := resp.Model
	if model == "" {
		model = l.opts.Model
	} else {
		l.costs.model = model
	}
	l.costs.maxOutput = max(l.costs.maxOutput, resp.Usage.OutputTokens)
	var c Cost
	usd, err := l.costs.chain.prices.Cost(model, resp.Usage)
	switch {
	case err != nil && l.costs.chain.prices == nil && !l.costs.chain.budgeted():
		// No table and no budget: pricing was not asked for.
	case err != nil:
		c = Cost{Unpriced: 1, Missing: missingNames(model, err)}
		l.opts.Logger.WarnContext(ctx, "agentloop: a model call could not be priced; its cost is not counted", "iteration", n, "error", err.Error())
	default:
		c = Cost{USD: usd, Calls: 1}
	}
	l.costs.chain.settle(len(l.costs.chain.meters), est, c)
	return c
}

// checkCost is the money budget's check before the model call of
// iteration n; it returns the estimate set aside for the call.
func (l *loop) checkCost(n int, promptTokens int) (float64, error) {
	for _, m := range l.costs.chain.meters {
		if m.limit <= 0 {
			continue
		}
		m.mu.Lock()
		unpriced := m.cost.Unpriced
		missing := slices.Clone(m.cost.Missing)
		m.mu.Unlock()
		if unpriced > 0 {
			return 0, fmt.Errorf("%w: %d model call(s) under a money budget could not be priced (%v), so the budget cannot be kept; add them to Options.Prices", ErrNoPrice, unpriced, missing)
		}
	}
	est := l.estimate(promptTokens)
	return est, l.costs.chain.reserve(n, est)
}

// runCost is what the run and its sub-agents cost.
func (l *loop) runCost() Cost {
	own := l.costs.own
	own.mu.Lock()
	defer own.mu.Unlock()
	c := own.cost
	c.Missing = slices.Clone(c.Missing)
	return c
}
