package agent_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

func planCall(plan string) llmtoolkit.Call {
	return llmtoolkit.Call{Name: agent.PlanToolName, Arguments: map[string]any{"plan": plan}}
}

func TestPlanApproveActChangesTheOfferedTools(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModePlan})
	var plans []string
	approve := func(_ context.Context, plan string) agent.PlanDecision {
		plans = append(plans, plan)
		return agent.PlanDecision{Approved: true, Mode: agent.ModeAcceptEdits}
	}
	ws := workspace()
	tools := p.Guard(llmtoolkit.Compose(ws, agent.PlanMode(p, approve)))
	write := kindCalls[agent.KindEdit]
	model := lt.NewScriptedModel(t,
		lt.CallTools(kindCalls[agent.KindReadOnly]),
		// The plan and a write in the same turn: the write is still checked in plan mode.
		lt.CallTools(planCall("1. edit a.go"), write),
		lt.CallTools(write),
		lt.Reply("done"),
	)
	_, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: tools, MaxParallel: 1, Logger: quiet})
	require.NoError(t, err)
	reqs := model.Requests()
	require.Len(t, reqs, 4)
	planTools := []string{"read_file", agent.PlanToolName}
	actTools := []string{"read_file", "write_file", "bash"}
	assert.Equal(t, planTools, toolNames(reqs[0].Tools))
	assert.Equal(t, planTools, toolNames(reqs[1].Tools))
	assert.Equal(t, actTools, toolNames(reqs[2].Tools), "from the iteration after the approval, the new mode's tools")
	assert.Equal(t, actTools, toolNames(reqs[3].Tools))
	assert.Equal(t, []string{"1. edit a.go"}, plans)
	assert.Equal(t, agent.ModeAcceptEdits, p.Mode())

	// history: 0 asst, 1 tool(read), 2 asst, 3 tool(plan), 4 tool(write denied), 5 asst, 6 tool(write ran), 7 asst
	require.Len(t, history, 8)
	assert.Contains(t, history[3].Content, "The plan was approved. The run is now in accept_edits mode")
	assert.True(t, history[4].IsError)
	assert.Contains(t, history[4].Content, "plan mode allows only read-only tools")
	assert.False(t, history[6].IsError, history[6].Content)
	assert.Equal(t, "write_file ran", history[6].Content)
	assert.Len(t, ws.CallsTo("write_file"), 1)
}

func TestPlanRejectedGivesTheReason(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModePlan})
	tools := p.Guard(llmtoolkit.Compose(workspace(), agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
		return agent.PlanDecision{Reason: "add a test step"}
	})))
	var turns []lt.Turn
	for range 4 {
		turns = append(turns, lt.CallTools(planCall("1. edit")))
	}
	model := lt.NewScriptedModel(t, append(turns, lt.Reply("ok"))...)
	_, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: tools, Logger: quiet})
	require.NoError(t, err, "rejections are denials: four in a row do not trip the breaker")
	assert.True(t, history[1].IsError)
	assert.Equal(t, `permission denied: tool "exit_plan_mode" was not run: the plan was rejected: add a test step. Revise it (you are still in plan mode) and call exit_plan_mode again`, history[1].Content)
	assert.Equal(t, agent.ModePlan, p.Mode())
	for _, req := range model.Requests() {
		assert.Equal(t, []string{"read_file", agent.PlanToolName}, toolNames(req.Tools))
	}
}

func TestPlanToolOutsidePlanMode(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModeDefault})
	called := false
	g := p.Guard(llmtoolkit.Compose(workspace(), agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
		called = true
		return agent.PlanDecision{Approved: true}
	})))
	assert.NotContains(t, toolNames(g.Tools()), agent.PlanToolName, "offered only in plan mode")
	res := llmtoolkit.Execute(t.Context(), g, planCall("x"))
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, "not in plan mode")
	assert.False(t, called)
}

func TestPlanWithoutApproverAndInvalidMode(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModePlan})
	res := llmtoolkit.Execute(t.Context(), p.Guard(agent.PlanMode(p, nil)), planCall("x"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "this host cannot approve plans")

	res = llmtoolkit.Execute(t.Context(), p.Guard(agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
		return agent.PlanDecision{Approved: true, Mode: "yolo"}
	})), planCall("x"))
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "invalid mode")
	assert.Equal(t, agent.ModePlan, p.Mode())

	res = llmtoolkit.Execute(t.Context(), p.Guard(agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
		panic("approver bug")
	})), planCall("x"))
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
}

func TestSetModeOutsideALoopAppliesAtOnce(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModePlan})
	require.NoError(t, p.SetMode(t.Context(), agent.ModeBypass))
	assert.Equal(t, agent.ModeBypass, p.ModeAt(t.Context()))
	ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.StartTurn(3) })
	require.NoError(t, p.SetMode(ctx, agent.ModeDefault))
	assert.Equal(t, agent.ModeBypass, p.ModeAt(ctx), "the rest of iteration 3 keeps the old mode")
	assert.Equal(t, agent.ModeDefault, p.ModeAt(llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.StartTurn(4) })))
	assert.Equal(t, agent.ModeDefault, p.Mode())
	assert.ErrorIs(t, p.SetMode(ctx, "nope"), agent.ErrInvalidConfig)
}
