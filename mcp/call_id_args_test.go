package mcp

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestReusedCallIDCannotHide: behind mcp.Handler with
// trace.WithIdempotentCalls, delete_branch {"name":"scratch"} then
// delete_branch {"name":"main"}, both with the _meta call id "call-1",
// both ran and the second row was skipped as a duplicate: the audit
// showed only scratch. The call's ID is now bound to its arguments, so
// both are audited; a retry with the same arguments still keeps one row.
func TestReusedCallIDCannotHide(t *testing.T) {
	var deleted []string
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"}}
	f := (&llmtoolkittest.Fake{}).Add(llmtoolkit.MustTool("delete_branch", "Deletes a branch.", schema),
		func(_ context.Context, c llmtoolkit.Call) (string, error) {
			deleted = append(deleted, c.Arguments["name"].(string))
			return "deleted", nil
		})
	db, err := trace.OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db, trace.WithIdempotentCalls()))
	rec := trace.Record(f, db, trace.WithIdempotentCalls(), trace.WithStrict(),
		trace.WithDefaultConversation(uuid.NewString(), uuid.NewString()))
	srv := httptest.NewServer(Handler(rec))
	t.Cleanup(srv.Close)
	cs := sdkSession(t, srv.URL, CurrentProtocolVersion, nil)

	for _, name := range []string{"scratch", "main", "main"} {
		params := &sdk.CallToolParams{Name: "delete_branch", Arguments: map[string]any{"name": name}}
		params.Meta = sdk.Meta{CallIDMetaKey: "call-1"}
		res, err := cs.CallTool(testContext(t), params)
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	assert.Equal(t, []string{"scratch", "main", "main"}, deleted)

	rows, err := trace.List(testContext(t), db, trace.Filter{})
	require.NoError(t, err)
	var audited []string
	ids := map[string]bool{}
	for _, r := range rows {
		audited = append(audited, r.Arguments["name"].(string))
		ids[*r.CallID] = true
	}
	sort.Strings(audited)
	assert.Equal(t, []string{"main", "scratch"}, audited, "both distinct calls are audited, the retry of main once")
	assert.Len(t, ids, 2)
	assert.Equal(t, int64(1), rec.Stats().Duplicates)
}
