package trace_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestFastInsertIsCreate: the row a Recorder writes through its prepared
// INSERT is, column for column as the database stores it, the row gorm's
// Create writes for the same trace (hostile strings, NULLs and set
// pointers, JSON with NULs and unicode, a cost or none, sync and async).
func TestFastInsertIsCreate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		args := map[string]any{"path": "a\x00b/é/\u2028<&>", "n": 1.5, "nested": map[string]any{"k": []any{"x", nil, true}}}
		for _, async := range []bool{false, true} {
			var opts []trace.Option
			r := echo() // sync: no cost, NULL cost columns
			if async {
				opts = append(opts, trace.WithAsync())
				// async: a cost shown, so set cost columns
				r = (&llmtoolkittest.Fake{}).Handle("echo", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
					llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "subagent", Payload: spent{USD: 0.012345, Unpriced: 2}})
					return "out", nil
				})
			}
			rec := trace.Record(r, db, opts...)
			ctx := llmtoolkit.WithScope(convCtx(t, 7), func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-\x00agent" })
			_, err := rec.Resolve(ctx, llmtoolkit.Call{ID: "call_\xffx", Name: "echo", Arguments: args})
			require.NoError(t, err)
			require.NoError(t, rec.Close())
		}
		rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, rows, 2)

		// The same traces, inserted by gorm's Create under new (later) IDs.
		for _, r := range rows {
			c := r
			c.ID = ""
			require.NoError(t, db.Create(&c).Error)
		}

		// Every column as the database holds it, as text.
		cols := `tenant_id, conversation_id, tool_name, arguments, result, result_type, duration_ms, iteration, parent_id, agent_id, call_id, cost_usd, unpriced_calls`
		var text []map[string]any
		asText := `SELECT ` + cols + `, CAST(inserted_at AS TEXT) AS time FROM tool_traces ORDER BY inserted_at, id`
		if db.Dialector.Name() == "sqlite" {
			asText = `SELECT ` + cols + `, typeof(inserted_at) AS time_type, inserted_at AS time FROM main.tool_traces ORDER BY inserted_at, id`
		}
		require.NoError(t, db.Raw(asText).Scan(&text).Error)
		require.Len(t, text, 4)
		// Rows sort by time: recorded sync, its copy, recorded async, its copy.
		assert.Equal(t, text[0], text[1], "sync: fast insert and Create agree")
		assert.Equal(t, text[2], text[3], "async: fast insert and Create agree")
		assert.Equal(t, "sub-\uFFFDagent", *rows[0].AgentID)
		assert.Nil(t, text[0]["cost_usd"], "sync: no cost")
		assert.NotNil(t, text[2]["cost_usd"], "async: a cost")
		assert.NotNil(t, text[2]["unpriced_calls"], "async: its unpriced calls")
	})
}
