package trace_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// The fake language server is this test binary (testkit.FakeLanguageServer).
func TestMain(m *testing.M) {
	testkit.FakeLanguageServer()
	os.Exit(m.Run())
}

// TestDiagnosticsInTraceRow: an edit's diagnostics, appended to its
// answer, are in the call's trace row, with line, column, code and
// message.
func TestDiagnosticsInTraceRow(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	fake := codetools.LanguageServer{Name: "fake", Command: []string{exe}, Env: []string{testkit.FakeLanguageServerEnv + "=ok"},
		Languages: map[string]string{".fake": "fake"}}
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		code, err := codetools.New(t.TempDir(), codetools.WithLanguageServers(fake),
			codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 20 * time.Second}))
		require.NoError(t, err)
		defer code.Close()
		rec := trace.Record(code, db)
		defer func() { require.NoError(t, rec.Close()) }()
		res := llmtoolkit.Execute(convCtx(t, 1), rec, llmtoolkit.Call{ID: "w1", Name: "write_file", Arguments: map[string]any{"path": "a.fake", "content": "ok\nBAD\n"}})
		require.False(t, res.IsError, res.Content)
		require.Contains(t, res.Content, "a.fake:2:1: error [bad]: BAD is not allowed")
		require.NoError(t, rec.Close())
		rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, rows, 1)
		content, _ := rows[0].Result["content"].(string)
		assert.Contains(t, content, "fake reports 1 error and 0 warnings in a.fake:\na.fake:2:1: error [bad]: BAD is not allowed")
	})
}
