package agent_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

func spawnCall(task string) llmtoolkit.Call {
	return llmtoolkit.Call{ID: "s1", Name: agent.SpawnToolName, Arguments: map[string]any{"task": task, "description": "find the bug"}}
}

func fixedID(id string) func() string { return func() string { return id } }

func newSpawn(t *testing.T, cfg agent.SubAgentConfig) llmtoolkit.Resolver {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = quiet
	}
	r, err := agent.SpawnAgent(cfg)
	require.NoError(t, err)
	return r
}

func TestSpawnAgentAnswers(t *testing.T) {
	type seen struct {
		agentID, user string
	}
	var mu sync.Mutex
	var calls []seen
	ws := workspace()
	grep := llmtoolkit.MustTool("grep", "Searches.", schema(map[string]any{"pattern": str}, "pattern"))
	grep.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
	ws.Add(grep, func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		mu.Lock()
		calls = append(calls, seen{llmtoolkit.ScopeFrom(ctx).AgentID, llmtoolkit.ScopeFrom(ctx).Session["user"].(string)})
		mu.Unlock()
		return "a.go:3: bug", nil
	})
	sub := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{Name: "grep", Arguments: map[string]any{"pattern": "bug"}}}, Usage: agentloop.Usage{InputTokens: 10, OutputTokens: 2}}},
		lt.Turn{Response: agentloop.Response{Content: "The bug is in a.go line 3.", Usage: agentloop.Usage{InputTokens: 20, OutputTokens: 8, CacheReadTokens: 15, CacheWriteTokens: 4, ReasoningTokens: 6}}},
	)
	var events []agentloop.EventKind
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: ws, Instructions: "You search code.", NewID: fixedID("sub-1"),
		OnEvent: func(id string, e agentloop.Event) {
			assert.Equal(t, "sub-1", id)
			events = append(events, e.Kind)
		}})
	def := spawn.Tools()[0]
	assert.True(t, def.Annotations.ReadOnly, "only read-only tools below: the plan mode may spawn")

	ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"user": "ada"} })
	res := llmtoolkit.Execute(ctx, spawn, spawnCall("Find where the bug is."))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "The bug is in a.go line 3.", res.Content)
	assert.Equal(t, []seen{{"sub-1", "ada"}}, calls, "the sub-agent's calls carry its id and the parent's session")

	reqs := sub.Requests()
	require.Len(t, reqs, 2)
	assert.Equal(t, []agentloop.Message{agentloop.SystemMessage("You search code."), agentloop.UserMessage("Find where the bug is.")}, reqs[0].Messages)
	assert.Equal(t, []string{"read_file", "grep"}, toolNames(reqs[0].Tools), "by default only the read-only tools")

	require.NotNil(t, res.Display)
	assert.Equal(t, agent.DisplaySubAgent, res.Display.Kind)
	p := res.Display.Payload.(agent.SubAgentPayload)
	assert.Equal(t, "sub-1", p.ID)
	assert.Equal(t, "find the bug", p.Description)
	assert.Equal(t, 2, p.Iterations)
	assert.Equal(t, 1, p.ToolCalls)
	assert.Equal(t, agent.SubAgentUsage{InputTokens: 30, OutputTokens: 10, CacheReadTokens: 15, CacheWriteTokens: 4, ReasoningTokens: 6}, p.Usage)
	assert.GreaterOrEqual(t, p.DurationMS, int64(0))
	assert.Empty(t, p.Error)
	assert.Equal(t, []agentloop.EventKind{agentloop.EventResponse, agentloop.EventToolCall, agentloop.EventToolResult, agentloop.EventResponse}, events)
}

func TestSpawnAgentAllowMutating(t *testing.T) {
	sub := lt.NewScriptedModel(t, lt.Reply("ok"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: workspace(), AllowMutating: true})
	assert.False(t, spawn.Tools()[0].Annotations.ReadOnly)
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("x"))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []string{"read_file", "write_file", "bash"}, toolNames(sub.Requests()[0].Tools))
	assert.Len(t, res.Display.Payload.(agent.SubAgentPayload).ID, 16, "a random id by default")
}

func TestSpawnAgentHitsItsLimit(t *testing.T) {
	sub := lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindReadOnly]), lt.CallTools(kindCalls[agent.KindReadOnly]))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: workspace(), MaxIterations: 2, NewID: fixedID("sub-2")})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("loop"))
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, agentloop.ErrMaxIterations)
	assert.Contains(t, res.Content, "sub-agent sub-2 reached its limit of 2 iterations without a final answer")
	p := res.Display.Payload.(agent.SubAgentPayload)
	assert.Equal(t, 2, p.Iterations)
	assert.Equal(t, 2, p.ToolCalls)
	assert.Contains(t, p.Error, "limit of 2 iterations")
}

// blocking is a model that waits for its context to end.
func blocking(started chan<- struct{}) agentloop.SendFunc {
	return func(ctx context.Context, _ []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		close(started)
		<-ctx.Done()
		return agentloop.Response{}, ctx.Err()
	}
}

func TestSpawnAgentCancelledWithItsParent(t *testing.T) {
	started := make(chan struct{})
	spawn := newSpawn(t, agent.SubAgentConfig{Model: blocking(started), NewID: fixedID("sub-3")})
	parent := lt.NewScriptedModel(t, lt.CallTools(spawnCall("wait")))
	ctx, cancel := context.WithCancel(t.Context())
	go func() {
		<-started
		cancel()
	}()
	var display *llmtoolkit.Display
	var result *llmtoolkit.Result
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _, err := agentloop.Run(ctx, nil, parent.Send, agentloop.Options{Resolver: spawn, Logger: quiet, OnEvent: func(e agentloop.Event) {
			switch e.Kind {
			case agentloop.EventDisplay:
				display = e.Display
			case agentloop.EventToolResult:
				result = e.Result
			}
		}})
		assert.ErrorIs(t, err, context.Canceled)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("cancelling the parent did not end the sub-agent")
	}
	require.NotNil(t, result)
	assert.True(t, result.IsError)
	assert.ErrorIs(t, result.Err, context.Canceled)
	require.NotNil(t, display)
	assert.Contains(t, display.Payload.(agent.SubAgentPayload).Error, "sub-agent sub-3 was cancelled with its parent")
}

func TestSpawnAgentDeadline(t *testing.T) {
	started := make(chan struct{})
	spawn := newSpawn(t, agent.SubAgentConfig{Model: blocking(started), Timeout: 20 * time.Millisecond, NewID: fixedID("sub-4")})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("wait"))
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
	assert.Contains(t, res.Content, "sub-agent sub-4 did not finish within its deadline (20ms)")
}

func TestSpawnAgentDepth(t *testing.T) {
	// The sub-agent is offered a spawn_agent of its own (read-only, so
	// offered by default) and calls it: refused at depth 1.
	inner := newSpawn(t, agent.SubAgentConfig{Model: lt.NewScriptedModel(t).Send})
	sub := lt.NewScriptedModel(t, lt.CallTools(spawnCall("deeper")), lt.Reply("I did it myself."))
	var results []llmtoolkit.Result
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: inner, NewID: fixedID("sub-5"),
		OnEvent: func(_ string, e agentloop.Event) {
			if e.Kind == agentloop.EventToolResult {
				results = append(results, *e.Result)
			}
		}})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("search"))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "I did it myself.", res.Content)
	require.Len(t, results, 1)
	assert.True(t, results[0].IsError)
	assert.ErrorIs(t, results[0].Err, agent.ErrMaxDepth)
	assert.Contains(t, results[0].Content, "this agent is 1 level(s) deep and the limit is 1")

	t.Run("a deeper limit lets it spawn", func(t *testing.T) {
		innerModel := lt.NewScriptedModel(t, lt.Reply("from depth 2"))
		inner := newSpawn(t, agent.SubAgentConfig{Model: innerModel.Send, MaxDepth: 2})
		sub := lt.NewScriptedModel(t, lt.CallTools(spawnCall("deeper")), lt.Reply("done"))
		spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: inner, MaxDepth: 2})
		res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("search"))
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "from depth 2", sub.Requests()[1].Messages[2].Content)
	})
}

func TestSpawnAgentConfig(t *testing.T) {
	_, err := agent.SpawnAgent(agent.SubAgentConfig{})
	assert.ErrorIs(t, err, agent.ErrInvalidConfig)
	_, err = agent.SpawnAgent(agent.SubAgentConfig{Model: lt.NewScriptedModel(t).Send, MaxIterations: -1})
	assert.ErrorIs(t, err, agent.ErrInvalidConfig)
	res := llmtoolkit.Execute(t.Context(), newSpawn(t, agent.SubAgentConfig{Model: lt.NewScriptedModel(t, lt.Fail(errors.New("rate limited"))).Send}), spawnCall("x"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "failed: agentloop: model call failed in iteration 1: rate limited")
}

// recordingTracer is an agentloop.Tracer that notes the agent id of the
// runs and model calls it is told of.
type recordingTracer struct {
	mu    sync.Mutex
	runs  []string
	calls []string
}

func (r *recordingTracer) StartRun(ctx context.Context) (context.Context, func(agentloop.RunEnd)) {
	r.mu.Lock()
	r.runs = append(r.runs, llmtoolkit.ScopeFrom(ctx).AgentID)
	r.mu.Unlock()
	return ctx, func(agentloop.RunEnd) {}
}

func (r *recordingTracer) StartModelCall(ctx context.Context, _ int) (context.Context, func(agentloop.Response, error)) {
	r.mu.Lock()
	r.calls = append(r.calls, llmtoolkit.ScopeFrom(ctx).AgentID)
	r.mu.Unlock()
	return ctx, func(agentloop.Response, error) {}
}

// TestSpawnAgentTracer: the sub-agent's run and model calls are told to
// SubAgentConfig.Tracer, with the sub-agent's id on their context.
func TestSpawnAgentTracer(t *testing.T) {
	sub := lt.NewScriptedModel(t, lt.Reply("done"))
	tr := &recordingTracer{}
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, NewID: fixedID("sub-7"), Tracer: tr})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("Say done."))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []string{"sub-7"}, tr.runs)
	assert.Equal(t, []string{"sub-7"}, tr.calls)
}

// TestSubAgentIDInDurableRun: with no NewID, a sub-agent spawned in a
// durable run (a run id on the context) is named from the call's
// idempotency key, so a resumed run's second attempt at the same call
// names it alike, and another run or call does not; outside a durable run
// the id is random.
func TestSubAgentIDInDurableRun(t *testing.T) {
	idOf := func(ctx context.Context, callID string) string {
		sub := lt.NewScriptedModel(t, lt.Turn{Response: agentloop.Response{Content: "done"}})
		spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: workspace()})
		call := spawnCall("look")
		call.ID = callID
		res := llmtoolkit.Execute(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.StartTurn(2) }), spawn, call)
		require.False(t, res.IsError, res.Content)
		return res.Display.Payload.(agent.SubAgentPayload).ID
	}
	run := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.RunID = "run-1" })
	first := idOf(run, "c1")
	assert.Regexp(t, `^[0-9a-f]{16}$`, first)
	assert.Equal(t, first, idOf(run, "c1"), "the same call of the same run: the same id on every attempt")
	assert.NotEqual(t, first, idOf(run, "c2"), "another call")
	assert.NotEqual(t, first, idOf(llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.RunID = "run-2" }), "c1"), "another run")
	assert.NotEqual(t, idOf(t.Context(), "c1"), idOf(t.Context(), "c1"), "no durable run: random ids")
}

// TestSubAgentBudgetDoesNotTripTheBreaker (issue 35, row 13): 40
// spawn_agent calls in one turn, under the loop's default circuit
// breaker: the budget refuses 24 of them with one message, which the
// breaker does not count (a refusal is the host's decision), so the run
// goes on and the model answers in its next turn. The same holds for a
// permission denial and a depth refusal.
func TestSubAgentBudgetDoesNotTripTheBreaker(t *testing.T) {
	child := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{Content: "done"}, nil
	}
	spawn := newSpawn(t, agent.SubAgentConfig{Model: child})
	calls := make([]llmtoolkit.Call, 40)
	for i := range calls {
		calls[i] = spawnCall(fmt.Sprint("task ", i))
		calls[i].ID = fmt.Sprint("s", i)
	}
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
	model := lt.NewScriptedModel(t, lt.CallTools(calls...), lt.Reply("all done"))
	var refused []error
	resp, _, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: p.Guard(spawn), MaxParallel: 40, Logger: quiet,
		OnIteration: func(it agentloop.Iteration) {
			for _, r := range it.Results {
				if r.IsError {
					refused = append(refused, r.Err)
				}
			}
		}})
	require.NoError(t, err, "the budget's refusals do not trip the breaker")
	assert.Equal(t, "all done", resp.Content)
	require.Len(t, refused, 40-agent.DefaultMaxSubAgents)
	for _, e := range refused {
		assert.ErrorIs(t, e, agent.ErrSubAgentBudget)
		assert.ErrorIs(t, e, llmtoolkit.ErrLimitReached)
	}

	// A sub-agent that may not spawn (depth) and a denied call: the same.
	deny := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: agent.SpawnToolName}}})
	for name, r := range map[string]llmtoolkit.Resolver{
		"denied": deny.Guard(newSpawn(t, agent.SubAgentConfig{Model: child})),
		"too deep": llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			return "", fmt.Errorf("sub-agent not started: %w", agent.ErrMaxDepth)
		}),
	} {
		t.Run(name, func(t *testing.T) {
			if name == "too deep" {
				r = llmtoolkit.Indexed(r, spawn.Tools())
			}
			turns := []lt.Turn{}
			for range 4 { // past the default threshold of 3
				turns = append(turns, lt.CallTools(spawnCall("again")))
			}
			model := lt.NewScriptedModel(t, append(turns, lt.Reply("did it myself"))...)
			resp, _, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: r, Logger: quiet})
			require.NoError(t, err)
			assert.Equal(t, "did it myself", resp.Content)
		})
	}
}
