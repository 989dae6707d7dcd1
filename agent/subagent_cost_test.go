package agent_test

import (
	"path/filepath"
	"testing"

	"github.com/google/uuid"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestSubAgentCostAcrossTwoModels: a parent on one model spawns a
// sub-agent on another; with cached and reasoning tokens on both, the
// sub-agent's payload and the whole run's cost are the hand computation,
// priced by the parent's table; the spawn_agent call's trace row holds the
// sub-agent's cost.
func TestSubAgentCostAcrossTwoModels(t *testing.T) {
	prices := agentloop.Prices{
		"gpt-a":    {Input: 2, Output: 8, CacheRead: 0.5, Reasoning: 8},
		"claude-b": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75},
	}
	// 100 × $3 + 5000 × $3.75 + 20000 × $0.3 + 300 × $15 (per million) = $0.02955
	sub := lt.NewScriptedModel(t, lt.Turn{Response: agentloop.Response{Model: "claude-b", Content: "found it",
		Usage: agentloop.Usage{InputTokens: 100, ContextTokens: 25100, CacheReadTokens: 20000, CacheWriteTokens: 5000, OutputTokens: 300}}})
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, NewID: fixedID("sub-1")})
	parent := lt.NewScriptedModel(t,
		// 2000 × $2 + 8000 × $0.5 + 400 × $8 + 600 × $8 = $0.016
		lt.Turn{Response: agentloop.Response{Model: "gpt-a", ToolCalls: []llmtoolkit.Call{spawnCall("find it")},
			Usage: agentloop.Usage{InputTokens: 10000, ContextTokens: 10000, CacheReadTokens: 8000, OutputTokens: 1000, ReasoningTokens: 600}}},
		// 2000 × $2 + 10000 × $0.5 + 200 × $8 = $0.0106
		lt.Turn{Response: agentloop.Response{Model: "gpt-a", Content: "done",
			Usage: agentloop.Usage{InputTokens: 12000, ContextTokens: 12000, CacheReadTokens: 10000, OutputTokens: 200}}},
	)
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	rec := trace.Record(spawn, db, trace.WithDefaultConversation(uuid.Nil.String(), uuid.Nil.String()))
	var payload *agent.SubAgentPayload
	meter := &agentloop.Meter{}
	_, _, err = agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, parent.Send, agentloop.Options{
		Resolver: rec, Prices: prices, Meter: meter, Logger: quiet,
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventToolResult && e.Result.Display != nil {
				p := e.Result.Display.Payload.(agent.SubAgentPayload)
				payload = &p
			}
		},
	})
	require.NoError(t, err)
	require.NotNil(t, payload)
	assert.InDelta(t, 0.02955, payload.CostUSD, 1e-12)
	assert.Zero(t, payload.UnpricedCalls)
	assert.Empty(t, payload.MissingPrices)
	c := meter.Cost()
	assert.InDelta(t, 0.016+0.0106+0.02955, c.USD, 1e-12, "the run's cost holds its sub-agent's")
	assert.Equal(t, 3, c.Calls)
	require.NoError(t, rec.Close())
	rows, err := trace.List(t.Context(), db, trace.Filter{})
	require.NoError(t, err)
	require.Len(t, rows, 1)
	require.NotNil(t, rows[0].CostUSD, "the spawn_agent row holds its sub-agent's cost")
	assert.InDelta(t, 0.02955, *rows[0].CostUSD, 1e-12)
	assert.Equal(t, 0, *rows[0].UnpricedCalls)
}

// TestSubAgentStopsAtTheParentsBudget: the parent's money budget holds
// inside its sub-agent: the sub-agent's second call ($0.20 spent, about
// $0.20 more estimated) would pass the parent's $0.35.
func TestSubAgentStopsAtTheParentsBudget(t *testing.T) {
	prices := agentloop.Prices{"m": {Input: 1, Output: 10}}
	ws := workspace() // read_file is read-only
	costly := lt.Turn{Response: agentloop.Response{Model: "m", ToolCalls: []llmtoolkit.Call{{Name: "read_file", Arguments: map[string]any{"path": "a"}}},
		Usage: agentloop.Usage{InputTokens: 100000, OutputTokens: 10000}}}
	sub := lt.NewScriptedModel(nil, costly, costly, lt.Reply("never"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: ws, NewID: fixedID("sub-1")})
	parent := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{Model: "m", ToolCalls: []llmtoolkit.Call{spawnCall("read a")}, Usage: agentloop.Usage{InputTokens: 1000}}},
		lt.Turn{Response: agentloop.Response{Model: "m", Content: "done", Usage: agentloop.Usage{InputTokens: 1000}}},
	)
	var payload *agent.SubAgentPayload
	meter := &agentloop.Meter{}
	_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("go")}, parent.Send, agentloop.Options{
		Resolver: spawn, Prices: prices, Meter: meter, MaxCostUSD: 0.35, Logger: quiet,
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventToolResult && e.Result.Display != nil {
				p := e.Result.Display.Payload.(agent.SubAgentPayload)
				payload = &p
			}
		},
	})
	require.NoError(t, err, "the parent's own calls fit")
	assert.Len(t, sub.Requests(), 1, "the sub-agent's second call would have passed the parent's budget")
	require.NotNil(t, payload)
	assert.Contains(t, payload.Error, "money budget")
	assert.InDelta(t, 0.2, payload.CostUSD, 1e-12)
	assert.InDelta(t, 0.202, meter.Cost().USD, 1e-12)
}
