package trace_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestCallIDOnEveryPath: the model's call id is in the row of a resolved
// call, of a call Execute refused (invalid arguments: the observer path) and
// of an async write, and List finds each row by it.
func TestCallIDOnEveryPath(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		for _, tc := range []struct {
			name  string
			opts  []trace.Option
			call  llmtoolkit.Call
			isErr bool
		}{
			{"resolved", nil, llmtoolkit.Call{ID: "call_sync_1", Name: "echo", Arguments: map[string]any{"text": "a & b"}}, false},
			{"refused by validation", nil, llmtoolkit.Call{ID: "toolu_refused", Name: "echo", Arguments: map[string]any{"text": 7}}, true},
			{"async", []trace.Option{trace.WithAsync()}, llmtoolkit.Call{ID: "call_async_1", Name: "echo", Arguments: map[string]any{"text": "x"}}, false},
			{"no call id", nil, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "y"}}, false},
		} {
			t.Run(tc.name, func(t *testing.T) {
				typed := llmtoolkit.MustTool("echo", "Echoes text.", map[string]any{
					"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}},
				})
				fake := (&llmtoolkittest.Fake{}).Add(typed, func(_ context.Context, c llmtoolkit.Call) (string, error) {
					return fmt.Sprint(c.Arguments["text"]), nil
				})
				rec := trace.Record(fake, db, tc.opts...)
				res := llmtoolkit.Execute(convCtx(t, 1), rec, tc.call)
				require.Equal(t, tc.isErr, res.IsError, res.Content)
				require.NoError(t, rec.Close())

				if tc.call.ID == "" {
					got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA, Limit: 1})
					require.NoError(t, err)
					require.Len(t, got, 1)
					assert.Nil(t, got[0].CallID, "a call without an id leaves call_id NULL")
					return
				}
				got, err := trace.List(t.Context(), db, trace.Filter{ConversationID: convA, CallID: tc.call.ID})
				require.NoError(t, err)
				require.Len(t, got, 1, "exactly one row carries the call id")
				require.NotNil(t, got[0].CallID)
				assert.Equal(t, tc.call.ID, *got[0].CallID)
				assert.Equal(t, tc.call.Name, got[0].ToolName)
			})
		}
	})
}

func TestMigrateAddsCallIDToAnOlderTable(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, db.Exec(`DROP INDEX IF EXISTS tool_traces_call_id_index`).Error)
		require.NoError(t, db.Exec(`ALTER TABLE tool_traces DROP COLUMN call_id`).Error)
		require.False(t, db.Migrator().HasColumn(&trace.Trace{}, "call_id"))
		require.NoError(t, trace.Migrate(db))
		assert.True(t, db.Migrator().HasColumn(&trace.Trace{}, "call_id"))
		assert.True(t, db.Migrator().HasIndex(&trace.Trace{}, "tool_traces_call_id_index"))
		require.NoError(t, trace.Migrate(db), "idempotent")
		tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: convA, ToolName: "grep", ResultType: trace.ResultOK, CallID: "call\x00x"})
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA, CallID: "call\x00x"})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.NotNil(t, got[0].CallID)
		assert.Equal(t, "call\uFFFDx", *got[0].CallID, "cleaned as tool names are")
	})
}
