package codetools

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestJobChangesReportDiagnostics: the files a background job changed are
// told to the server, and job_output (or job_kill) reports their
// diagnostics once, whether the job still runs or has ended; the starting
// and the reading call's excluded paths are left out;
// WithoutDiagnostics("bash") turns it off; a command that auto-background
// made a job is watched from then on.
func TestJobChangesReportDiagnostics(t *testing.T) {
	type read struct {
		tool      string
		args      map[string]any
		want, not []string
	}
	cases := []struct {
		name, command string
		auto, off     bool
		ctx           context.Context
		reads         []read
	}{
		{name: "running", command: "printf 'BAD\\n' > j.fake; exec sleep 60", reads: []read{
			{tool: "job_output", args: map[string]any{"wait_seconds": 2}, want: []string{"fake reports 1 error and 0 warnings in j.fake:\nj.fake:1:1: error [bad]"}},
			{tool: "job_output", args: map[string]any{}, not: []string{"j.fake"}}, // reported once
			{tool: "job_kill", not: []string{"j.fake"}},
		}},
		{name: "ended", command: "sleep 0.5; printf 'ok\\nBAD\\n' > k.fake", reads: []read{
			{tool: "job_output", args: map[string]any{"wait_seconds": 20, "until_exit": true}, want: []string{"exited with code 0", "k.fake:2:1: error [bad]"}},
			{tool: "job_output", args: map[string]any{}, not: []string{"k.fake"}},
		}},
		{name: "killed after a change", command: "printf 'BAD BAD\\n' > m.fake; exec sleep 60", reads: []read{
			{tool: "job_kill", want: []string{"killed", "m.fake:1:1: error [bad]"}},
		}},
		{name: "excluded", command: "mkdir -p secret; echo BAD > secret/s.fake; echo BAD > open.fake", ctx: excluding("secret/**"), reads: []read{
			{tool: "job_output", args: map[string]any{"wait_seconds": 20, "until_exit": true}, want: []string{"open.fake:1:1: error"}, not: []string{"secret"}},
		}},
		{name: "off", command: "echo BAD > o.fake", off: true, reads: []read{
			{tool: "job_output", args: map[string]any{"wait_seconds": 20, "until_exit": true}, want: []string{"exited with code 0"}, not: []string{"o.fake"}},
		}},
		{name: "auto-background", command: "sleep 1; echo BAD > auto.fake; exec sleep 60", auto: true, reads: []read{
			{tool: "job_output", args: map[string]any{"wait_seconds": 3}, want: []string{"auto.fake:1:1: error [bad]"}},
			{tool: "job_kill", not: []string{"auto.fake"}},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []Option{WithBackgroundJobs(), WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second})}
			if tc.off {
				opts = append(opts, WithoutDiagnostics("bash"))
			}
			if tc.auto {
				opts = append(opts, WithBashAutoBackground(300*time.Millisecond))
			}
			c := newTools(t, opts...)
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			args := map[string]any{"command": tc.command, "run_in_background": true}
			if tc.auto {
				args = map[string]any{"command": tc.command}
			}
			res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "bash", Arguments: args})
			require.False(t, res.IsError, res.Content)
			id := jobID(t, res.Content)
			for i, r := range tc.reads {
				a := map[string]any{"job_id": id}
				for k, v := range r.args {
					a[k] = v
				}
				res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: r.tool, Arguments: a})
				require.False(t, res.IsError, res.Content)
				for _, w := range r.want {
					assert.Contains(t, res.Content, w, "read %d", i)
				}
				for _, n := range r.not {
					assert.NotContains(t, res.Content, n, "read %d", i)
				}
			}
		})
	}
}

// TestJobChangesWithGopls: a job's sed breaks a type, job_output reports
// gopls's error; a second job's fix clears it.
func TestJobChangesWithGopls(t *testing.T) {
	if testing.Short() {
		t.Skip("a real gopls: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	server := goplsServer(t)
	dir := goModule(t)
	c, err := New(dir, WithBackgroundJobs(), WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second, Quiet: 300 * time.Millisecond}))
	require.NoError(t, err)
	defer c.Close()
	run := func(command string) string {
		res := execute(c, "bash", map[string]any{"command": command, "run_in_background": true})
		require.False(t, res.IsError, res.Content)
		res = execute(c, "job_output", map[string]any{"job_id": jobID(t, res.Content), "wait_seconds": 60, "until_exit": true})
		require.False(t, res.IsError, res.Content)
		return res.Content
	}
	out := run("sleep 0.3; sed -i 's/var X int/var X string/' b/b.go")
	assert.Contains(t, out, "gopls reports 1 error and 0 warnings in b/b.go:\nb/b.go:5:", out)
	assert.Contains(t, out, "cannot use a.N()")
	out = run("sleep 0.3; sed -i 's/var X string/var X int/' b/b.go")
	assert.Contains(t, out, "gopls reports no errors or warnings in b/b.go.", out)
}
