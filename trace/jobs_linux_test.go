package trace_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestJobsAuditTrail: a background job and a terminal leave a row for
// their start, each read and write, and their stop, in order; no row
// holds a secret: neither a URL's password in the command and in the
// output, nor a value typed in a sensitive field (write_stdin's chars,
// marked by the host), echoed in that call's answer and printed again by
// a later read.
func TestJobsAuditTrail(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		code, err := codetools.New(t.TempDir(), codetools.WithBackgroundJobs(), codetools.WithTerminals())
		require.NoError(t, err)
		defer code.Close()
		rec := trace.Record(code, db, trace.WithRedactFields("chars"))
		defer func() { require.NoError(t, rec.Close()) }()
		ctx := convCtx(t, 1)
		call := func(name string, args map[string]any) string {
			res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: name, Name: name, Arguments: args})
			require.False(t, res.IsError, "%s: %s", name, res.Content)
			return res.Content
		}
		const urlPass, laterPass, typed = "s3cr3t-in-command", "an0ther-in-output", "typed-secret-value"
		started := call("bash", map[string]any{"run_in_background": true,
			"command": "echo fetch https://ada:" + urlPass + "@example.com; sleep 1; echo then https://bob:" + laterPass + "@example.com; sleep 60"})
		require.Contains(t, started, "Started job 1")
		require.Contains(t, started, urlPass, "the model reads its output as it is")
		assert.Contains(t, call("job_output", map[string]any{"job_id": 1, "wait_seconds": 5}), laterPass)
		shell := call("exec_command", map[string]any{"cmd": "read -r pw; echo got:$pw; sleep 1; echo again:$pw; sleep 60", "tty": true, "yield_time_ms": 300})
		require.Contains(t, shell, "session ID 2")
		assert.Contains(t, call("write_stdin", map[string]any{"session_id": 2, "chars": typed + "\n", "yield_time_ms": 500}), "got:"+typed)
		assert.Contains(t, call("job_output", map[string]any{"job_id": 2, "wait_seconds": 5}), "again:"+typed)
		call("job_kill", map[string]any{"job_id": 1})
		call("job_kill", map[string]any{"job_id": 2})

		rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		slices.SortStableFunc(rows, func(a, b trace.Trace) int { return a.InsertedAt.Compare(b.InsertedAt) })
		var names []string
		for _, r := range rows {
			names = append(names, r.ToolName)
			data, err := json.Marshal(r)
			require.NoError(t, err)
			for _, secret := range []string{urlPass, laterPass, typed} {
				assert.NotContains(t, string(data), secret, "row %s", r.ToolName)
			}
		}
		assert.Equal(t, []string{"bash", "job_output", "exec_command", "write_stdin", "job_output", "job_kill", "job_kill"}, names)
		require.Len(t, rows, 7)
		assert.Contains(t, rows[0].Result["content"], "fetch https://ada:"+trace.Redacted+"@example.com")
		assert.Contains(t, rows[1].Result["content"], "then https://bob:"+trace.Redacted+"@")
		assert.Equal(t, trace.Redacted, rows[3].Arguments["chars"])
		assert.Contains(t, rows[3].Result["content"], "got:"+trace.Redacted)
		assert.Contains(t, rows[4].Result["content"], "again:"+trace.Redacted, "a secret typed earlier is scrubbed from a later read")
		assert.True(t, strings.Contains(rows[5].Result["content"].(string), "killed (stopped)"))
	})
}
