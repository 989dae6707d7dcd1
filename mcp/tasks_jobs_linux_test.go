package mcp

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestBackgroundJobAsTask: served with bash of TaskOnDemand support, a
// background command of a client that runs tasks is an MCP task that
// runs it to its end (its output the task's result) and tasks/cancel
// kills it with every process it started; a client without tasks gets a
// job, as before.
func TestBackgroundJobAsTask(t *testing.T) {
	code, err := codetools.New(t.TempDir(), codetools.WithBackgroundJobs())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	srv := httptest.NewServer(Handler(code, WithTaskTools(map[string]TaskSupport{"bash": TaskOnDemand})))
	t.Cleanup(srv.Close)
	ctx := testContext(t)
	bg := func(command string) llmtoolkit.Call {
		return llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": command, "run_in_background": true}}
	}

	plain, err := Connect(ctx, HTTPTransport(srv.URL, nil))
	require.NoError(t, err)
	defer plain.Close()
	out, err := plain.Resolve(ctx, bg("echo plain; sleep 30"))
	require.NoError(t, err)
	assert.Regexp(t, `Started job \d+`, out, "no tasks: a job of the server's")

	c, err := Connect(ctx, HTTPTransport(srv.URL, nil), WithClientTasks())
	require.NoError(t, err)
	defer c.Close()
	out, err = c.Resolve(ctx, bg("echo start; sleep 1; echo end"))
	require.NoError(t, err)
	assert.Equal(t, "start\nend", out, "the task ran the command to its end")

	marker := "task-job-" + strconv.Itoa(os.Getpid())
	st, err := c.StartTask(ctx, bg("exec -a "+marker+" sleep 600"))
	require.NoError(t, err)
	require.NotEmpty(t, st.ID, "a task")
	require.Eventually(t, func() bool { return len(processesNamed(t, marker)) == 1 }, testTimeout, 20*time.Millisecond, "the command runs")
	st, err = c.CancelTask(ctx, st.ID)
	require.NoError(t, err)
	assert.Equal(t, TaskCancelled, st.Status)
	require.Eventually(t, func() bool { return len(processesNamed(t, marker)) == 0 }, testTimeout, 20*time.Millisecond, "cancelling the task killed the command")
}

// processesNamed lists the pids whose command line starts with name.
func processesNamed(t *testing.T, name string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	require.NoError(t, err)
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.HasPrefix(string(cmdline), name+"\x00") {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestExecCommandAsTask: served with exec_command of TaskOnDemand
// support, a command without a terminal of a client that runs tasks is
// an MCP task that runs it to its end, answered as exec_command answers
// an ended command, with an empty input (nobody holds a session ID to
// type into it); tasks/cancel kills it with every process it started. A
// command on a terminal stays a session (write_stdin types into it), and
// a client without tasks gets a session, as before.
func TestExecCommandAsTask(t *testing.T) {
	code, err := codetools.New(t.TempDir(), codetools.WithTerminals())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	srv := httptest.NewServer(Handler(code, WithTaskTools(map[string]TaskSupport{"exec_command": TaskOnDemand})))
	t.Cleanup(srv.Close)
	ctx := testContext(t)
	exec := func(cmd string, tty bool) llmtoolkit.Call {
		return llmtoolkit.Call{Name: "exec_command", Arguments: map[string]any{"cmd": cmd, "tty": tty, "yield_time_ms": 100}}
	}
	sessionRe := regexp.MustCompile(`Process running with session ID (\d+)`)

	plain, err := Connect(ctx, HTTPTransport(srv.URL, nil))
	require.NoError(t, err)
	defer plain.Close()
	// A yield long enough for the echo on a loaded machine, short of the sleep.
	out, err := plain.Resolve(ctx, llmtoolkit.Call{Name: "exec_command", Arguments: map[string]any{"cmd": "echo plain; sleep 30", "tty": false, "yield_time_ms": 3000}})
	require.NoError(t, err)
	assert.Regexp(t, sessionRe, out, "no tasks: a session of the server's")
	assert.Contains(t, out, "plain")

	c, err := Connect(ctx, HTTPTransport(srv.URL, nil), WithClientTasks())
	require.NoError(t, err)
	defer c.Close()
	out, err = c.Resolve(ctx, exec("echo start; sleep 1; read -r x; echo end:$x; exit 3", false))
	require.NoError(t, err)
	assert.Contains(t, out, "Process exited with code 3", "the task ran the command to its end, past its yield time")
	assert.Contains(t, out, "start\nend:\n", "its input is empty")
	assert.NotRegexp(t, sessionRe, out)

	out, err = c.Resolve(ctx, exec("read -r x; echo got:$x", true))
	require.NoError(t, err)
	m := sessionRe.FindStringSubmatch(out)
	require.NotNil(t, m, "a terminal stays a session: %s", out)
	id, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	out, err = c.Resolve(ctx, llmtoolkit.Call{Name: "write_stdin", Arguments: map[string]any{"session_id": id, "chars": "hi\r", "yield_time_ms": 3000}})
	require.NoError(t, err)
	assert.Contains(t, out, "got:hi")

	marker := "task-exec-" + strconv.Itoa(os.Getpid())
	st, err := c.StartTask(ctx, exec("exec -a "+marker+" sleep 600", false))
	require.NoError(t, err)
	require.NotEmpty(t, st.ID, "a task")
	require.Eventually(t, func() bool { return len(processesNamed(t, marker)) == 1 }, testTimeout, 20*time.Millisecond, "the command runs")
	st, err = c.CancelTask(ctx, st.ID)
	require.NoError(t, err)
	assert.Equal(t, TaskCancelled, st.Status)
	require.Eventually(t, func() bool { return len(processesNamed(t, marker)) == 0 }, testTimeout, 20*time.Millisecond, "cancelling the task killed the command")
}
