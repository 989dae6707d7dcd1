package codetools

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestJobDisplays: every call on a job or a terminal shows a "job"
// Display with what a UI needs: the event, the job's id, command and
// state, the new output the model was shown, the exit; a command kept
// as a one-shot by WithBashAutoBackground shows bash's "process" Display.
func TestJobDisplays(t *testing.T) {
	ct := newTools(t, WithBashAutoBackground(30*time.Second), WithTerminals())
	run := func(name string, args map[string]any) llmtoolkit.Result {
		res := llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{ID: name, Name: name, Arguments: args})
		require.False(t, res.IsError, "%s: %s", name, res.Content)
		return res
	}

	res := run("bash", map[string]any{"command": "echo first; sleep 1; echo second; sleep 60", "run_in_background": true})
	p := payloadOf[JobPayload](t, res, DisplayJob)
	assert.Equal(t, JobStarted, p.Event)
	bg := jobID(t, res.Content)
	assert.Equal(t, bg, p.JobID)
	assert.Equal(t, "echo first; sleep 1; echo second; sleep 60", p.Command)
	assert.Equal(t, "running", p.State)
	assert.Equal(t, "first", p.Output)
	assert.False(t, p.Terminal)
	assert.NotEmpty(t, p.LogFile)
	assert.NotEmpty(t, p.Sandbox)

	p = payloadOf[JobPayload](t, run("job_output", map[string]any{"job_id": bg, "wait_seconds": 5}), DisplayJob)
	assert.Equal(t, JobRead, p.Event)
	assert.Equal(t, "second", p.Output, "only the new output")
	assert.Equal(t, int64(len("first\nsecond\n")), p.OutputBytes)
	assert.Positive(t, p.DurationMS)

	p = payloadOf[JobPayload](t, run("job_kill", map[string]any{"job_id": bg}), DisplayJob)
	assert.Equal(t, JobStopped, p.Event)
	assert.Equal(t, "killed", p.State)
	assert.Equal(t, "stopped", p.Reason)
	assert.NotZero(t, p.ExitCode)

	res = run("exec_command", map[string]any{"cmd": "read -r x; echo got:$x; exit 4", "tty": true, "yield_time_ms": 300})
	p = payloadOf[JobPayload](t, res, DisplayJob)
	assert.Equal(t, JobStarted, p.Event)
	term := session(t, res.Content)
	assert.Equal(t, term, p.JobID)
	assert.NotEqual(t, bg, term)
	assert.True(t, p.Terminal)
	assert.True(t, p.TTY)
	p = payloadOf[JobPayload](t, run("write_stdin", map[string]any{"session_id": term, "chars": "hello\r", "yield_time_ms": 3000}), DisplayJob)
	assert.Equal(t, JobWritten, p.Event)
	assert.Equal(t, "exited", p.State)
	assert.Equal(t, 4, p.ExitCode)
	assert.Contains(t, p.Output, "got:hello")
	assert.NotContains(t, p.Output, "\x1b")

	require.NoError(t, os.WriteFile(filepath.Join(ct.Root(), "long.txt"), []byte(strings.Repeat("a line of the file\n", 200)), 0o644))
	less := session(t, run("exec_command", map[string]any{"cmd": "less long.txt", "tty": true, "yield_time_ms": 1500}).Content)
	p = payloadOf[JobPayload](t, run("write_stdin", map[string]any{"session_id": less, "yield_time_ms": 300}), DisplayJob)
	assert.Equal(t, JobRead, p.Event, "no chars: a read")
	assert.True(t, p.Screen, "less's screen")
	assert.Contains(t, p.Output, "a line of the file")
	run("write_stdin", map[string]any{"session_id": less, "chars": "q"})

	// A one-shot command through the auto-background path: bash's Display.
	res = llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{ID: "b", Name: "bash", Arguments: map[string]any{"command": "echo out; exit 3"}})
	require.True(t, res.IsError)
	pp := payloadOf[ProcessPayload](t, res, DisplayProcess)
	assert.Equal(t, 3, pp.ExitCode)
	assert.Equal(t, "out", pp.Output)
	assert.Equal(t, "echo out; exit 3", pp.Command)
	assert.Empty(t, pp.OutputFile, "the whole output is shown")
}
