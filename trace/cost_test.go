package trace_test

import (
	"context"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// spent is a Display payload that reports a cost, as agent.SubAgentPayload
// does.
type spent struct {
	USD      float64
	Unpriced int
}

func (s spent) ReportedCost() (float64, int) { return s.USD, s.Unpriced }

// TestCostOfASubAgentCallInItsRow: a call that shows a payload reporting a
// cost has it in cost_usd and unpriced_calls, through Execute, through a
// bare Resolve (the host's own Show listener is still told) and the async
// writer; a call showing none, or another payload, leaves both NULL; a
// payload that is not an amount is recorded as unpriced, the row written.
func TestCostOfASubAgentCallInItsRow(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, tc := range []struct {
			name         string
			payload      any
			bare, async  bool
			wantUSD      *float64
			wantUnpriced int
		}{
			{"execute", spent{USD: 0.012345, Unpriced: 0}, false, false, ptr(0.012345), 0},
			{"execute, pointer payload, unpriced", &spent{USD: 0.5, Unpriced: 2}, false, false, ptr(0.5), 2},
			{"bare resolve", spent{USD: 1.25}, true, false, ptr(1.25), 0},
			{"async", spent{USD: 3}, false, true, ptr(3.0), 0},
			{"no cost reported", map[string]any{"costUsd": 9}, false, false, nil, 0},
			{"not an amount", spent{USD: math.NaN()}, false, false, ptr(0.0), 1},
			{"negative", spent{USD: -1, Unpriced: 0}, false, false, ptr(0.0), 1},
		} {
			t.Run(tc.name, func(t *testing.T) {
				fake := (&llmtoolkittest.Fake{}).Handle("spawn_agent", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
					llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "subagent", Payload: tc.payload})
					return "done", nil
				})
				var opts []trace.Option
				if tc.async {
					opts = append(opts, trace.WithAsync())
				}
				rec := trace.Record(fake, db, opts...)
				callID := "call_" + tc.name
				call := llmtoolkit.Call{ID: callID, Name: "spawn_agent", Arguments: map[string]any{}}
				var hostSaw int
				ctx := llmtoolkit.WithListeners(convCtx(t, 1), llmtoolkit.Listeners{Show: func(llmtoolkit.Display) { hostSaw++ }})
				if tc.bare {
					_, err := rec.Resolve(ctx, call)
					require.NoError(t, err)
				} else {
					res := llmtoolkit.Execute(ctx, rec, call)
					require.False(t, res.IsError, res.Content)
					require.NotNil(t, res.Display, "Execute still keeps the Display")
				}
				assert.Equal(t, 1, hostSaw, "the host's Show listener is told once")
				require.NoError(t, rec.Close())
				got, err := trace.List(t.Context(), db, trace.Filter{ConversationID: convA, CallID: callID})
				require.NoError(t, err)
				require.Len(t, got, 1)
				if tc.wantUSD == nil {
					assert.Nil(t, got[0].CostUSD)
					assert.Nil(t, got[0].UnpricedCalls)
					return
				}
				require.NotNil(t, got[0].CostUSD)
				require.NotNil(t, got[0].UnpricedCalls)
				assert.InDelta(t, *tc.wantUSD, *got[0].CostUSD, 1e-12)
				assert.Equal(t, tc.wantUnpriced, *got[0].UnpricedCalls)
			})
		}
	})
}

func ptr[T any](v T) *T { return &v }

// TestNewChecksTheCost: a cost that is not a finite amount, not negative,
// or a negative count of unpriced calls, is refused by name.
func TestNewChecksTheCost(t *testing.T) {
	for _, tc := range []struct {
		usd      float64
		unpriced int
		field    string
	}{
		{math.Inf(1), 0, "cost_usd"},
		{math.NaN(), 0, "cost_usd"},
		{-0.01, 0, "cost_usd"},
		{1, -1, "unpriced_calls"},
	} {
		_, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "spawn_agent", ResultType: trace.ResultOK, CostUSD: &tc.usd, UnpricedCalls: tc.unpriced})
		var ve *trace.ValidationError
		require.ErrorAs(t, err, &ve)
		assert.True(t, ve.Has(tc.field), err)
	}
	tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "spawn_agent", ResultType: trace.ResultOK, CostUSD: ptr(0.0)})
	require.NoError(t, err)
	require.NotNil(t, tr.UnpricedCalls, "recorded with the cost")
}

func TestMigrateAddsTheCostColumnsToAnOlderTable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, col := range []string{"cost_usd", "unpriced_calls"} {
			require.NoError(t, db.Exec(`ALTER TABLE tool_traces DROP COLUMN `+col).Error)
			require.False(t, db.Migrator().HasColumn(&trace.Trace{}, col))
		}
		require.NoError(t, trace.Migrate(db))
		require.NoError(t, trace.Migrate(db), "idempotent")
		tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "spawn_agent", ResultType: trace.ResultOK, CostUSD: ptr(0.25), UnpricedCalls: 1, CallID: "c1"})
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
		got, err := trace.List(t.Context(), db, trace.Filter{ConversationID: convA, CallID: "c1"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.NotNil(t, got[0].CostUSD)
		assert.Equal(t, 0.25, *got[0].CostUSD)
		assert.Equal(t, 1, *got[0].UnpricedCalls)
		err = db.Exec(`INSERT INTO tool_traces (id, tenant_id, conversation_id, tool_name, result_type, duration_ms, iteration, inserted_at, cost_usd) VALUES ('018f0000-0000-7000-8000-000000000001', ?, ?, 'x', 'ok', 0, 0, CURRENT_TIMESTAMP, -1)`, tenant, convA).Error
		assert.Error(t, err, "the database refuses a negative cost")
	})
}
