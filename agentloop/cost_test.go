package agentloop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

var testPrices = agentloop.Prices{
	"gpt-a":    {Input: 2, Output: 8, CacheRead: 0.5, Reasoning: 8},
	"claude-b": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
}

// TestPricesCost: each kind of token at its own price, per million,
// against a hand computation; the provider's own figure wins; a missing
// price is an error naming it, never a free call.
func TestPricesCost(t *testing.T) {
	tests := map[string]struct {
		model   string
		usage   agentloop.Usage
		want    float64
		missing string
	}{
		// 2000 uncached × $2 + 8000 cached × $0.5 + 400 output × $8 + 600 reasoning × $8, per million.
		"openai-like: cached and reasoning": {"gpt-a", agentloop.Usage{InputTokens: 10000, ContextTokens: 10000, CacheReadTokens: 8000, OutputTokens: 1000, ReasoningTokens: 600},
			0.004 + 0.004 + 0.0032 + 0.0048, ""},
		// 100 uncached × $3 + 5000 written × $3.75 + 20000 read × $0.3 + 300 output × $15.
		"anthropic-like: cache reads and writes": {"claude-b", agentloop.Usage{InputTokens: 100, ContextTokens: 25100, CacheReadTokens: 20000, CacheWriteTokens: 5000, OutputTokens: 300},
			0.0003 + 0.01875 + 0.006 + 0.0045, ""},
		"no ContextTokens: InputTokens is the prompt": {"gpt-a", agentloop.Usage{InputTokens: 1000, OutputTokens: 10}, 0.002 + 0.00008, ""},
		"the provider's figure":                       {"unknown", agentloop.Usage{InputTokens: 5, CostUSD: usd(0.42)}, 0.42, ""},
		"a model not in the table":                    {"gpt-z", agentloop.Usage{InputTokens: 5}, 0, `"gpt-z" is not in the price table`},
		"no model named":                              {"", agentloop.Usage{InputTokens: 5}, 0, "names no model"},
		"a kind without its price":                    {"claude-b", agentloop.Usage{InputTokens: 5, OutputTokens: 9, ReasoningTokens: 4}, 0, "[reasoning]"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := testPrices.Cost(tt.model, tt.usage)
			if tt.missing != "" {
				require.ErrorIs(t, err, agentloop.ErrNoPrice)
				assert.Contains(t, err.Error(), tt.missing)
				assert.Zero(t, got)
				return
			}
			require.NoError(t, err)
			assert.InDelta(t, tt.want, got, 1e-12)
		})
	}
}

func TestCostAdd(t *testing.T) {
	c := agentloop.Cost{USD: 1, Calls: 1, Unpriced: 1, Missing: []string{"m", "a"}}.Add(agentloop.Cost{USD: 0.5, Calls: 2, Unpriced: 1, Missing: []string{"m"}})
	assert.Equal(t, agentloop.Cost{USD: 1.5, Calls: 3, Unpriced: 2, Missing: []string{"a", "m"}}, c)
}

// noopTool resolves one tool, noop, that answers "ok".
func noopTool() *lt.Fake {
	return (&lt.Fake{}).Add(llmtoolkit.MustTool("noop", "Does nothing.", map[string]any{"type": "object"}), func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil })
}

// costTracer keeps what RunEnd says.
type costTracer struct{ end agentloop.RunEnd }

func (c *costTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	return ctx, func(e agentloop.RunEnd) { c.end = e }
}

func (c *costTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	return ctx, func(agentloop.Response, error) {}
}

// TestRunCost: a run's cost, call by call and in all, is the hand
// computation; a call it cannot price is counted and named.
func TestRunCost(t *testing.T) {
	noop := noopTool()
	model := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{Model: "gpt-a", ToolCalls: []llmtoolkit.Call{{Name: "noop"}},
			Usage: agentloop.Usage{InputTokens: 10000, ContextTokens: 10000, CacheReadTokens: 8000, OutputTokens: 1000, ReasoningTokens: 600}}},
		lt.Turn{Response: agentloop.Response{Model: "mystery", ToolCalls: []llmtoolkit.Call{{Name: "noop"}}, Usage: agentloop.Usage{InputTokens: 5}}},
		lt.Turn{Response: agentloop.Response{Content: "done", Usage: agentloop.Usage{InputTokens: 100, ContextTokens: 25100, CacheReadTokens: 20000, CacheWriteTokens: 5000, OutputTokens: 300}}},
	)
	var its []agentloop.Cost
	tr := &costTracer{}
	meter := &agentloop.Meter{}
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
		Resolver: noop, Prices: testPrices, Model: "claude-b", Meter: meter, Tracer: tr,
		Logger:      quiet,
		OnIteration: func(it agentloop.Iteration) { its = append(its, it.Cost) },
	})
	require.NoError(t, err)
	require.Len(t, its, 3)
	assert.InDelta(t, 0.016, its[0].USD, 1e-12)
	assert.Equal(t, agentloop.Cost{Unpriced: 1, Missing: []string{"mystery"}}, its[1])
	assert.InDelta(t, 0.02955, its[2].USD, 1e-12, "the answer names no model: Options.Model prices it")
	want := agentloop.Cost{USD: 0.016 + 0.02955, Calls: 2, Unpriced: 1, Missing: []string{"mystery"}}
	for _, got := range []agentloop.Cost{tr.end.Cost, meter.Cost()} {
		assert.InDelta(t, want.USD, got.USD, 1e-12)
		got.USD = want.USD
		assert.Equal(t, want, got)
	}
}

// TestMoneyBudgetStopsAtTheRightCall: every call costs $0.20 (100,000
// prompt tokens at $1 and 10,000 output tokens at $10 per million); the
// estimate of the next call is the prompt as counted (the provider's
// 100,000 plus the few tokens added since) at $1 plus the largest output
// so far at $10: about $0.20. The run stops before the call that would
// pass the budget, having made exactly the calls that fit.
func TestMoneyBudgetStopsAtTheRightCall(t *testing.T) {
	prices := agentloop.Prices{"m": {Input: 1, Output: 10}}
	for _, tt := range []struct {
		budget float64
		calls  int // model calls made
		spent  float64
	}{
		{0.1, 1, 0.2},  // the first call is estimated at its short prompt: made; the second would pass
		{0.5, 2, 0.4},  // 0.4 + 0.2 > 0.5
		{0.7, 3, 0.6},  // 0.6 + 0.2 > 0.7
		{0.79, 3, 0.6}, // 0.6 + 0.20004 > 0.79
		{10, 5, 0.8},   // never reached: the last answer has no output, the run ends well
	} {
		t.Run(fmt.Sprint(tt.budget), func(t *testing.T) {
			noop := noopTool()
			call := lt.Turn{Response: agentloop.Response{Model: "m", ToolCalls: []llmtoolkit.Call{{Name: "noop"}}, Usage: agentloop.Usage{InputTokens: 100000, ContextTokens: 100000, OutputTokens: 10000}}}
			model := lt.NewScriptedModel(nil, call, call, call, call, lt.Turn{Response: agentloop.Response{Model: "m", Content: "done"}})
			tr := &costTracer{}
			_, history, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
				Resolver: noop, Prices: prices, MaxCostUSD: tt.budget, Tracer: tr, Logger: quiet,
			})
			assert.Len(t, model.Requests(), tt.calls)
			assert.InDelta(t, tt.spent, tr.end.Cost.USD, 1e-9)
			if tt.calls == 5 {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, agentloop.ErrCostBudget)
			var be *agentloop.CostBudgetError
			require.True(t, errors.As(err, &be))
			assert.Equal(t, tt.calls+1, be.Iteration)
			assert.InDelta(t, tt.spent, be.SpentUSD, 1e-9)
			assert.Greater(t, be.SpentUSD+be.EstimateUSD, tt.budget)
			assert.Equal(t, tt.budget, be.LimitUSD)
			assert.Len(t, history, 1+2*tt.calls, "every call's tool message is there: the history is paired")
		})
	}
}

// TestMoneyBudgetNeedsPrices: under a budget, a call that cannot be priced
// ends the run before the next call.
func TestMoneyBudgetNeedsPrices(t *testing.T) {
	noop := noopTool()
	model := lt.NewScriptedModel(nil, lt.Turn{Response: agentloop.Response{Model: "other", ToolCalls: []llmtoolkit.Call{{Name: "noop"}}, Usage: agentloop.Usage{InputTokens: 10}}}, lt.Reply("done"))
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
		Resolver: noop, Prices: testPrices, MaxCostUSD: 1, Logger: quiet,
	})
	require.ErrorIs(t, err, agentloop.ErrNoPrice)
	assert.Contains(t, err.Error(), "other")
	assert.Len(t, model.Requests(), 1)

	_, _, err = agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{MaxCostUSD: -1})
	require.ErrorIs(t, err, agentloop.ErrInvalidOptions)
}

// TestMoneyBudgetWithoutTable: a budget without a price table stops the
// run after the first call that reports no cost, never runs free.
func TestMoneyBudgetWithoutTable(t *testing.T) {
	noop := noopTool()
	call := lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{Name: "noop"}}, Usage: agentloop.Usage{InputTokens: 10, CostUSD: usd(0.3)}}}
	model := lt.NewScriptedModel(nil, call, call, lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{Name: "noop"}}, Usage: agentloop.Usage{InputTokens: 10}}}, lt.Reply("done"))
	tr := &costTracer{}
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, model.Send, agentloop.Options{
		Resolver: noop, MaxCostUSD: 5, Tracer: tr, Logger: quiet,
	})
	require.ErrorIs(t, err, agentloop.ErrNoPrice)
	assert.Len(t, model.Requests(), 3)
	assert.InDelta(t, 0.6, tr.end.Cost.USD, 1e-12, "the provider's figures are counted")
	assert.Equal(t, 2, tr.end.Cost.Calls)
	assert.Equal(t, 1, tr.end.Cost.Unpriced)
}
