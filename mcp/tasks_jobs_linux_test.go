package mcp

import (
	"net/http/httptest"
	"os"
	"path/filepath"
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
