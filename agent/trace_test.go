package agent_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

const (
	tenant = "0b6f9f3e-4a52-4f0e-9d8e-2f1c6a7b8c9d"
	conv   = "6a1d2c3b-5e4f-4a6b-8c7d-9e0f1a2b3c4d"
)

// TestDenialsAndSubAgentsAreTraced runs a parent that is refused one call
// and spawns a sub-agent, with a Recorder inside the guard (the documented
// order) or outside it, and one on the sub-agent's tools: every call leaves
// a row in the parent's tenant and conversation, the refusal as an error,
// the sub-agent's with its id.
//
// The sub-agent's tools are recorded by the host (Tools: trace.Record(...))
// or given plain (Tools: code, the README's snippet): the parent's Recorder
// records them, once, either way.
func TestDenialsAndSubAgentsAreTraced(t *testing.T) {
	for _, inside := range []bool{true, false} {
		for _, subRecorded := range []bool{true, false} {
			name := map[bool]string{true: "recorder inside the guard", false: "recorder outside the guard"}[inside] +
				map[bool]string{true: ", sub-agent tools recorded by the host", false: ", plain sub-agent tools"}[subRecorded]
			t.Run(name, func(t *testing.T) {
				testDenialsAndSubAgentsAreTraced(t, inside, subRecorded)
			})
		}
	}
}

func testDenialsAndSubAgentsAreTraced(t *testing.T, inside, subRecorded bool) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))

	var subTools llmtoolkit.Resolver = workspace()
	if subRecorded {
		rec := trace.Record(workspace(), db)
		defer func() { require.NoError(t, rec.Close()) }()
		subTools = rec
	}
	sub := lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindReadOnly]), lt.Reply("found it"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{Model: sub.Send, Tools: subTools, NewID: fixedID("sub-9"), Logger: quiet})
	require.NoError(t, err)

	p := newPerms(t, agent.Config{Allow: []agent.Rule{{Tool: agent.SpawnToolName}},
		CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			if call.Name == "read_file" { // the sub-agent's call: it runs under these permissions
				return agent.Allow()
			}
			return agent.Deny("not now")
		}})
	var parentTools llmtoolkit.Resolver
	if inside {
		rec := trace.Record(llmtoolkit.Compose(workspace(), spawn), db)
		defer func() { require.NoError(t, rec.Close()) }()
		parentTools = p.Guard(rec)
	} else {
		rec := trace.Record(p.Guard(llmtoolkit.Compose(workspace(), spawn)), db)
		defer func() { require.NoError(t, rec.Close()) }()
		parentTools = rec
	}

	parent := lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindOther]), lt.CallTools(spawnCall("search")), lt.Reply("done"))
	ctx := trace.WithConversation(t.Context(), tenant, conv, 0)
	_, _, err = agentloop.Run(ctx, nil, parent.Send, agentloop.Options{Resolver: parentTools, Logger: quiet})
	require.NoError(t, err)

	rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: conv})
	require.NoError(t, err)
	type row struct {
		tool, result, agent string
		iteration           int
	}
	var got []row
	for _, r := range rows {
		assert.Equal(t, tenant, r.TenantID)
		assert.Equal(t, conv, r.ConversationID)
		a := ""
		if r.AgentID != nil {
			a = *r.AgentID
		}
		got = append(got, row{r.ToolName, r.ResultType, a, r.Iteration})
	}
	assert.ElementsMatch(t, []row{
		{"bash", trace.ResultError, "", 1},
		{"read_file", trace.ResultOK, "sub-9", 1},
		{agent.SpawnToolName, trace.ResultOK, "", 2},
	}, got)
	for _, r := range rows {
		if r.ToolName == "bash" {
			assert.Equal(t, trace.JSON{"error": `permission denied: tool "bash" was not run: not now`}, r.Result)
		}
	}
}

func TestGuardOverARecorderOffersEachModesTools(t *testing.T) {
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	p := newPerms(t, agent.Config{Mode: agent.ModePlan})
	rec := trace.Record(llmtoolkit.Compose(workspace(), agent.PlanMode(p, nil)), db)
	defer func() { require.NoError(t, rec.Close()) }()
	g := p.Guard(rec)
	assert.Equal(t, []string{"read_file", agent.PlanToolName}, toolNames(g.Tools()))
	require.NoError(t, p.SetMode(t.Context(), agent.ModeAcceptEdits))
	assert.Equal(t, []string{"read_file", "write_file", "bash"}, toolNames(g.Tools()))
}

// TestRefusedRecipeIsTraced: a recipe call the guard refuses leaves one
// error row, with the Recorder inside the guard or outside it, and none of
// its steps ran.
func TestRefusedRecipeIsTraced(t *testing.T) {
	for _, inside := range []bool{true, false} {
		t.Run(map[bool]string{true: "recorder inside the guard", false: "recorder outside the guard"}[inside], func(t *testing.T) {
			db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
			require.NoError(t, err)
			require.NoError(t, trace.Migrate(db))
			ws := recipeWorkspace()
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "survey"}}})
			var tools llmtoolkit.Resolver
			if inside {
				rec := trace.Record(ws, db)
				defer func() { require.NoError(t, rec.Close()) }()
				tools = p.Guard(rec)
			} else {
				rec := trace.Record(p.Guard(ws), db)
				defer func() { require.NoError(t, rec.Close()) }()
				tools = rec
			}
			ctx := trace.WithConversation(t.Context(), tenant, conv, 0)
			res := llmtoolkit.Execute(ctx, tools, llmtoolkit.Call{ID: "r1", Name: "survey", Arguments: map[string]any{"path": "a.go"}})
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Empty(t, ws.Calls())
			rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: conv})
			require.NoError(t, err)
			require.Len(t, rows, 1)
			assert.Equal(t, "survey", rows[0].ToolName)
			assert.Equal(t, trace.ResultError, rows[0].ResultType)
		})
	}
}
