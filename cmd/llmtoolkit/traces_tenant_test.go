package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestTracesTenant: on a server whose tenants come from tokens, traces
// showed no tenant and could not filter by one. It now has a TENANT
// column and --tenant keeps one tenant's calls; a tenant that is not a
// UUID is a usage error.
func TestTracesTenant(t *testing.T) {
	const tenantA, tenantB = "0193a2b4-0000-7000-8000-00000000000a", "0193a2b4-0000-7000-8000-00000000000b"
	path := filepath.Join(t.TempDir(), "t.db")
	db, err := trace.OpenSQLite(path)
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))
	for _, tenant := range []string{tenantA, tenantB, tenantB} {
		tr, err := trace.New(trace.Attrs{TenantID: tenant, ConversationID: "0193a2b4-0000-7000-8000-000000000001",
			ToolName: "grep", ResultType: trace.ResultOK, Arguments: map[string]any{"pattern": "x"}})
		require.NoError(t, err)
		require.NoError(t, db.Create(tr).Error)
	}
	sqlDB, err := db.DB()
	require.NoError(t, err)
	require.NoError(t, sqlDB.Close())

	tests := []struct {
		name    string
		args    []string
		tenants []string
	}{
		{"all", nil, []string{tenantB, tenantB, tenantA}},
		{"tenant A", []string{"--tenant", tenantA}, []string{tenantA}},
		{"tenant B", []string{"--tenant", tenantB}, []string{tenantB, tenantB}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), append([]string{"traces", "--db", path}, tc.args...), strings.NewReader(""), &stdout, &stderr)
			require.Equal(t, exitOK, code, stderr.String())
			lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
			require.Len(t, lines, 1+len(tc.tenants), stdout.String())
			assert.Contains(t, lines[0], "TENANT")
			var got []string
			for _, l := range lines[1:] {
				for _, f := range strings.Fields(l) {
					if f == tenantA || f == tenantB {
						got = append(got, f)
					}
				}
			}
			assert.ElementsMatch(t, tc.tenants, got)
		})
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"traces", "--db", path, "--tenant", "acme"}, strings.NewReader(""), &stdout, &stderr)
	assert.Equal(t, exitUsage, code)
	assert.Contains(t, stderr.String(), "--tenant")
}
