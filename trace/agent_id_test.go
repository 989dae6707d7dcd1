package trace_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

func TestRecordSubAgentID(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		rec := trace.Record(llmtoolkittest.NewFake(map[string]string{"grep": "found"}), db)
		defer func() { require.NoError(t, rec.Close()) }()
		ctx := convCtx(t, 1)
		res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{Name: "grep"})
		require.False(t, res.IsError, res.Content)
		res = llmtoolkit.Execute(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-7" }), rec, llmtoolkit.Call{Name: "grep"})
		require.False(t, res.IsError, res.Content)

		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, got, 2)
		var agents []string
		for _, g := range got {
			assert.Equal(t, tenant, g.TenantID, "a sub-agent's call keeps the parent's tenant")
			assert.Equal(t, convA, g.ConversationID, "and conversation")
			if g.AgentID == nil {
				agents = append(agents, "<nil>")
			} else {
				agents = append(agents, *g.AgentID)
			}
		}
		assert.ElementsMatch(t, []string{"<nil>", "sub-7"}, agents)
	})
}

func TestMigrateAddsAgentIDToAnOlderTable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.Exec(`ALTER TABLE tool_traces DROP COLUMN agent_id`).Error)
		require.False(t, db.Migrator().HasColumn(&trace.Trace{}, "agent_id"))
		require.NoError(t, trace.Migrate(db))
		assert.True(t, db.Migrator().HasColumn(&trace.Trace{}, "agent_id"))
		require.NoError(t, trace.Migrate(db), "idempotent")
		tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "grep", ResultType: trace.ResultOK, AgentID: "sub-1"})
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.NotNil(t, got[0].AgentID)
		assert.Equal(t, "sub-1", *got[0].AgentID)
	})
}
