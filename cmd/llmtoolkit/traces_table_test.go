package main

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestMCPTraceTable records into a named table and reads it back with
// traces --table; the default table stays empty.
func TestMCPTraceTable(t *testing.T) {
	dir := projectDir(t)
	db := filepath.Join(t.TempDir(), "t.db")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	cmd := exec.Command(bin, "mcp", "--root", dir, "--trace-db", db, "--trace-table", "audit_traces")
	var serverLog lockedBuffer
	cmd.Stderr = &serverLog
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	if err != nil {
		t.Fatalf("connecting: %v\nserver log: %s", err, serverLog.String())
	}
	got, err := client.Resolve(ctx, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	require.NoError(t, err)
	assert.Contains(t, got, "hello from a")
	require.NoError(t, client.Close())
	assert.NotContains(t, serverLog.String(), "level=ERROR")

	res := runBin(t, "", "traces", "--db", db, "--table", "audit_traces")
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 2, res.stdout)
	assert.Regexp(t, `read_file\s+ok\s.*a\.txt`, lines[1])

	res = runBin(t, "", "traces", "--db", db, "--table", "main.audit_traces")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Len(t, strings.Split(strings.TrimSpace(res.stdout), "\n"), 2, "schema-qualified: %s", res.stdout)

	res = runBin(t, "", "traces", "--db", db)
	assert.NotEqual(t, 0, res.code, "no tool_traces table was made: %s", res.stdout)
	assert.Contains(t, res.stderr, "tool_traces")
}

func TestTraceTableUsageErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "t.db")
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"traces", "--db", db, "--table", "x; DROP TABLE y"}, "--table: trace: invalid table name"},
		{[]string{"traces", "--table", "a.b.c"}, "2 dots"},
		{[]string{"traces", "--table", ""}, "empty"},
		{[]string{"mcp", "--trace-db", db, "--trace-table", `x"y`}, "--trace-table: trace: invalid table name"},
		{[]string{"mcp", "--trace-table", "audit_traces"}, "--trace-table needs --trace-db"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, exitUsage, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.Empty(t, stdout.String())
		})
	}
	assert.NoFileExists(t, db, "nothing was opened")
}

// TestTracesShowsTheCallID: a row written with the model's call id is shown
// with it, found by --call, and its arguments keep & < > as written.
func TestTracesShowsTheCallID(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := trace.OpenSQLite(path)
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	for _, id := range []string{"call_abc", "call_other"} {
		tr, err := trace.New(trace.Attrs{TenantID: uuid.Nil.String(), ConversationID: "0193a2b4-0000-7000-8000-000000000001",
			ToolName: "grep", ResultType: trace.ResultOK, CallID: id, Arguments: map[string]any{"pattern": "a && <b>"}})
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
	}
	sqlDB, err := db.DB()
	require.NoError(t, err)
	require.NoError(t, sqlDB.Close())

	res := runBin(t, "", "traces", "--db", path, "--call", "call_abc")
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 2, res.stdout)
	assert.Contains(t, lines[0], "CALL")
	assert.Contains(t, lines[1], "call_abc")
	assert.Contains(t, lines[1], `"a && <b>"`, "no \\u0026 in a terminal")
}

// TestTracesShowsTheCost: a sub-agent call's row shows what its model calls
// cost, with the unpriced ones counted; a row without a cost shows "-".
func TestTracesShowsTheCost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := trace.OpenSQLite(path)
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	usd := 0.0123456
	for _, a := range []trace.Attrs{
		{ToolName: "spawn_agent", CallID: "call_priced", CostUSD: &usd},
		{ToolName: "spawn_agent", CallID: "call_unpriced", CostUSD: &usd, UnpricedCalls: 2},
		{ToolName: "grep", CallID: "call_none"},
	} {
		a.TenantID, a.ConversationID, a.ResultType = uuid.Nil.String(), "0193a2b4-0000-7000-8000-000000000001", trace.ResultOK
		tr, err := trace.New(a)
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
	}
	sqlDB, err := db.DB()
	require.NoError(t, err)
	require.NoError(t, sqlDB.Close())

	for call, want := range map[string]string{"call_priced": "$0.012346  ", "call_unpriced": "$0.012346 +2 unpriced", "call_none": "call_none  -  "} {
		res := runBin(t, "", "traces", "--db", path, "--call", call)
		require.Equal(t, 0, res.code, res.stderr)
		lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
		require.Len(t, lines, 2, res.stdout)
		assert.Contains(t, lines[0], "COST")
		assert.Contains(t, lines[1], want, call)
	}
}
