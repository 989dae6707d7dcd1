package trace_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// idIn reads the id re's first group matches in answer: ids are not
// known before (they are unique beyond the process).
func idIn(t *testing.T, re string, answer string) int {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(answer)
	require.NotNil(t, m, "no %s in %q", re, answer)
	id, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return id
}

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
		bg := idIn(t, `Started job (\d+)`, started)
		require.Contains(t, started, urlPass, "the model reads its output as it is")
		assert.Contains(t, call("job_output", map[string]any{"job_id": bg, "wait_seconds": 5}), laterPass)
		shell := call("exec_command", map[string]any{"cmd": "read -r pw; echo got:$pw; sleep 1; echo again:$pw; sleep 60", "tty": true, "yield_time_ms": 300})
		term := idIn(t, `session ID (\d+)`, shell)
		assert.Contains(t, call("write_stdin", map[string]any{"session_id": term, "chars": typed + "\n", "yield_time_ms": 500}), "got:"+typed)
		assert.Contains(t, call("job_output", map[string]any{"job_id": term, "wait_seconds": 5}), "again:"+typed)
		call("job_kill", map[string]any{"job_id": bg})
		call("job_kill", map[string]any{"job_id": term})

		var rows []trace.Trace
		require.Eventually(t, func() bool { // each job's end: a row of its own, once it is gone
			var err error
			rows, err = trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
			require.NoError(t, err)
			return len(rows) == 9
		}, 10*time.Second, 20*time.Millisecond)
		slices.SortStableFunc(rows, func(a, b trace.Trace) int { return a.InsertedAt.Compare(b.InsertedAt) })
		ends := slices.DeleteFunc(slices.Clone(rows), func(r trace.Trace) bool { return r.ToolName != "job_end" })
		rows = slices.DeleteFunc(rows, func(r trace.Trace) bool { return r.ToolName == "job_end" })
		require.Len(t, ends, 2)
		for _, r := range ends {
			data, err := json.Marshal(r)
			require.NoError(t, err)
			for _, secret := range []string{urlPass, laterPass, typed} {
				assert.NotContains(t, string(data), secret, "the end of %v", r.Arguments)
			}
			assert.Equal(t, trace.ResultError, r.ResultType)
			assert.Contains(t, r.Result["error"], "killed (stopped)")
		}
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

// TestJobEndAuditRow: a job that ends on its own, never read again, leaves
// a row of its own ("job_end") when it ends, attributed to the call that
// started it (tenant, conversation, agent, call id), secrets scrubbed; a
// terminal's too. A later read still sees all its new output.
func TestJobEndAuditRow(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		code, err := codetools.New(t.TempDir(), codetools.WithBackgroundJobs(), codetools.WithTerminals())
		require.NoError(t, err)
		defer code.Close()
		rec := trace.Record(code, db)
		defer func() { require.NoError(t, rec.Close()) }()
		ctx := llmtoolkit.WithScope(convCtx(t, 2), func(s *llmtoolkit.Scope) { s.AgentID, s.Iteration = "helper-1", 2 })
		const pass = "pa55-in-the-command"
		res := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: "call-bg", Name: "bash", Arguments: map[string]any{"run_in_background": true,
			"command": "sleep 1.5; echo https://ada:" + pass + "@example.com; echo done; exit 3"}})
		require.False(t, res.IsError, res.Content)
		bgID := idIn(t, `Started job (\d+)`, res.Content)
		res = llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: "call-tty", Name: "exec_command", Arguments: map[string]any{"cmd": "sleep 0.3; echo bye", "tty": true, "yield_time_ms": 50}})
		require.False(t, res.IsError, res.Content)
		assert.NotEqual(t, bgID, idIn(t, `Process running with session ID (\d+)`, res.Content))

		var ends []trace.Trace
		require.Eventually(t, func() bool {
			rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA, ToolName: "job_end"})
			require.NoError(t, err)
			ends = rows
			return len(rows) == 2
		}, 10*time.Second, 20*time.Millisecond)
		slices.SortFunc(ends, func(a, b trace.Trace) int { return strings.Compare(*a.CallID, *b.CallID) })
		bg, tty := ends[0], ends[1]
		assert.Equal(t, "call-bg", *bg.CallID)
		assert.Equal(t, "helper-1", *bg.AgentID)
		assert.Equal(t, 2, bg.Iteration)
		assert.Equal(t, "bash", bg.Arguments["started_by"])
		assert.EqualValues(t, bgID, bg.Arguments["job_id"])
		assert.Equal(t, trace.ResultError, bg.ResultType)
		assert.Contains(t, bg.Result["error"], "exited with code 3")
		assert.Contains(t, bg.Result["error"], "https://ada:"+trace.Redacted+"@example.com")
		data, err := json.Marshal(bg)
		require.NoError(t, err)
		assert.NotContains(t, string(data), pass)
		assert.Equal(t, "call-tty", *tty.CallID)
		assert.Equal(t, "exec_command", tty.Arguments["started_by"])
		assert.Equal(t, trace.ResultOK, tty.ResultType)
		assert.Contains(t, tty.Result["content"], "exited with code 0")
		assert.Contains(t, tty.Result["content"], "bye")

		out := llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: "read", Name: "job_output", Arguments: map[string]any{"job_id": bgID}})
		assert.Contains(t, out.Content, "done", "the end's row did not read the job's output")
	})
}

// TestBashSessionShellEndAuditRow: the persistent shell of
// WithBashSession outlives the call that started it, as a job does; when
// it ends (here a restart, then an exit of the shell itself) it leaves a
// job_end row attributed to that call, secrets scrubbed.
func TestBashSessionShellEndAuditRow(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		code, err := codetools.New(t.TempDir(), codetools.WithBashSession())
		require.NoError(t, err)
		defer code.Close()
		rec := trace.Record(code, db)
		defer func() { require.NoError(t, rec.Close()) }()
		ctx := convCtx(t, 1)
		const pass = "sh3ll-s3cret"
		call := func(id string, args map[string]any) llmtoolkit.Result {
			return llmtoolkit.Execute(ctx, rec, llmtoolkit.Call{ID: id, Name: "bash", Arguments: args})
		}
		res := call("call-first", map[string]any{"command": "echo https://ada:" + pass + "@example.com"})
		require.False(t, res.IsError, res.Content)
		res = call("call-restart", map[string]any{"restart": true, "command": "echo second shell"})
		require.False(t, res.IsError, res.Content)
		res = call("call-exit", map[string]any{"command": "exit 4"})
		require.True(t, res.IsError, res.Content)

		var ends []trace.Trace
		require.Eventually(t, func() bool {
			rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA, ToolName: "job_end"})
			require.NoError(t, err)
			ends = rows
			return len(rows) == 2
		}, 10*time.Second, 20*time.Millisecond)
		slices.SortFunc(ends, func(a, b trace.Trace) int { return strings.Compare(*a.CallID, *b.CallID) })
		first, second := ends[0], ends[1]
		assert.Equal(t, "call-first", *first.CallID)
		assert.Equal(t, "bash", first.Arguments["started_by"])
		assert.Contains(t, first.Result["error"], "killed (the bash session ended)")
		assert.Contains(t, first.Result["error"], "https://ada:"+trace.Redacted+"@example.com")
		data, err := json.Marshal(first)
		require.NoError(t, err)
		assert.NotContains(t, string(data), pass)
		assert.NotContains(t, string(data), "__llmtoolkit_done_", "the session's markers are not output")
		assert.Equal(t, "call-restart", *second.CallID)
		assert.Contains(t, second.Result["error"], "exited with code 4")
		assert.NotEqual(t, first.Arguments["job_id"], second.Arguments["job_id"])
	})
}
