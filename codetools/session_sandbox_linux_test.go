package codetools

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// sessionTools returns tools whose commands share one loopback network,
// the network closed, or skips where that cannot run.
func sessionTools(t *testing.T) *CodeTools {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("a shared network namespace needs root")
	}
	if _, err := sandbox.NewLandlock(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	needProgram(t, "curl")
	if _, err := os.Stat("/usr/bin/python3"); err != nil { // the sandbox reads the system folders, not a home's pyenv
		t.Skip("no /usr/bin/python3")
	}
	c, err := New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite}), WithSessionSandbox(), WithBackgroundJobs(), WithSandboxRequired())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// TestSessionSandboxServerAnswersALaterCall is the proof with the
// network closed: a server started in the background by one call answers
// a later call's curl localhost; the host's own loopback stays out of
// reach; the log is read, the server stopped, nothing is left.
func TestSessionSandboxServerAnswersALaterCall(t *testing.T) {
	c := sessionTools(t)
	assert.Contains(t, c.Sandbox(), "no network, shared loopback")
	bash, _ := c.LookupTool("bash")
	assert.Contains(t, bash.Description, "a loopback (localhost) shared by every command")
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { fmt.Fprint(w, "host") }))
	defer host.Close()
	port := 18000 + int(time.Now().UnixNano()%1000)
	out := mustRun(t, c, "bash", map[string]any{"command": fmt.Sprintf("exec /usr/bin/python3 -u -m http.server %d --bind 127.0.0.1", port), "run_in_background": true})
	id := jobID(t, out)
	var got string
	require.Eventually(t, func() bool {
		got, _ = run(t, c, "bash", map[string]any{"command": fmt.Sprintf("curl -sf -o /dev/null -w '%%{http_code}' http://127.0.0.1:%d/", port)})
		return got == "200"
	}, 20*time.Second, 200*time.Millisecond, "the server never answered: %s", got)
	_, err := run(t, c, "bash", map[string]any{"command": "curl -sf --max-time 3 " + host.URL})
	require.Error(t, err, "the host's loopback is another network")
	_, err = net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	require.Error(t, err, "the sandbox's server is not on the host's loopback")
	log := mustRun(t, c, "job_output", map[string]any{"job_id": id, "wait_seconds": 5})
	assert.Contains(t, log, `"GET / HTTP/1.1" 200`)
	mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	_, err = run(t, c, "bash", map[string]any{"command": fmt.Sprintf("curl -sf --max-time 3 http://127.0.0.1:%d/", port)})
	require.Error(t, err, "stopped: nothing answers")
	assert.Zero(t, c.jobs.Running())
}

func TestSessionSandboxRefusesBubblewrap(t *testing.T) {
	if _, err := sandbox.NewBubblewrap(); err != nil {
		t.Skipf("no bubblewrap here: %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("a shared network namespace needs root")
	}
	_, err := New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSessionSandbox())
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot join a shared network namespace")
}
