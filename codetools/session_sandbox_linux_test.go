package codetools

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// sessionTools returns tools whose commands share one loopback network,
// the network closed, or skips where that cannot run.
func sessionTools(t *testing.T, more ...Option) *CodeTools {
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
	c, err := New(t.TempDir(), append([]Option{WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite}), WithSessionSandbox(), WithBackgroundJobs(), WithSandboxRequired()}, more...)...)
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

// TestSessionSandboxUnderBubblewrap: bubblewrap's server holds the
// session's network: a background server answers a later call, the host's
// loopback is out of reach.
func TestSessionSandboxUnderBubblewrap(t *testing.T) {
	if _, err := sandbox.NewBubblewrap(); err != nil {
		t.Skipf("no bubblewrap here: %v", err)
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	needProgram(t, "curl")
	c, err := New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSessionSandbox(), WithBackgroundJobs(), WithSandboxRequired())
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Contains(t, c.Sandbox(), "bubblewrap (workspace-write, no network, shared loopback")
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
	_, err = run(t, c, "bash", map[string]any{"command": "curl -sf --max-time 3 " + host.URL})
	require.Error(t, err, "the host's loopback is another network")
	mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	assert.Zero(t, c.jobs.Running())
}

// marked returns the host pids of the live processes whose command line
// holds marker.
func markedPids(marker string) []string {
	out, _ := exec.Command("pgrep", "-f", marker).Output()
	return strings.Fields(string(out))
}

// TestSessionSandboxJobForkingADaemon: a job of the session's sandbox forks
// a detached daemon (setsid, its own session and group); a one-shot call
// does the same and ends. Stopping the job, and the call's end, end each
// daemon: every command is the init of a PID namespace of its own.
func TestSessionSandboxJobForkingADaemon(t *testing.T) {
	c := sessionTools(t)
	tag := fmt.Sprintf("llmtoolkit-session-daemon-%d", time.Now().UnixNano())
	daemon := func(name string) string {
		return fmt.Sprintf("(setsid bash -c 'exec -a %s sleep 1000' </dev/null >/dev/null 2>&1 &); sleep 0.3", name)
	}
	mustRun(t, c, "bash", map[string]any{"command": daemon(tag + "-call")})
	assert.Empty(t, markedPids(tag+"-call"), "a one-shot call's daemon outlived it")
	out := mustRun(t, c, "bash", map[string]any{"command": daemon(tag+"-job") + "; echo up; sleep 1000", "run_in_background": true})
	id := jobID(t, out)
	require.Eventually(t, func() bool { return len(markedPids(tag+"-job")) == 1 }, 10*time.Second, 50*time.Millisecond, "the daemon never started")
	mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	assert.Eventually(t, func() bool { return len(markedPids(tag+"-job")) == 0 }, 5*time.Second, 20*time.Millisecond, "the job's daemon outlived it")
}

// TestSessionSandboxManyConcurrentJobs: 64 jobs at once in one session's
// sandbox, each read and stopped; nothing of them is left after Close.
func TestSessionSandboxManyConcurrentJobs(t *testing.T) {
	requireStress(t)
	c := sessionTools(t, WithJobLimits(JobLimits{MaxJobs: 64}))
	tag := fmt.Sprintf("llmtoolkit-session-many-%d", time.Now().UnixNano())
	var wg sync.WaitGroup
	ids := make([]int, 64)
	first := make([]string, 64)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := run(t, c, "bash", map[string]any{"command": fmt.Sprintf("echo job-%d; exec -a %s sleep 1000", i, tag), "run_in_background": true})
			if assert.NoError(t, err) {
				ids[i], first[i] = jobID(t, out), out
			}
		}()
	}
	wg.Wait()
	require.Eventually(t, func() bool { return len(markedPids(tag)) == 64 }, 30*time.Second, 100*time.Millisecond)
	for i, id := range ids[:32] {
		out := mustRun(t, c, "job_output", map[string]any{"job_id": id})
		assert.Contains(t, first[i]+out, fmt.Sprintf("job-%d", i))
		mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	}
	require.NoError(t, c.Close()) // the other 32 end with the session
	assert.Empty(t, markedPids(tag), "jobs outlived Close")
}

// TestSessionSandboxJobPrintingAGibibyte: a job of the session's sandbox
// prints 1 GiB; the host's heap and the log stay bounded.
func TestSessionSandboxJobPrintingAGibibyte(t *testing.T) {
	requireStress(t)
	c := sessionTools(t, WithBashSpillLimit(4<<20))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := mustRun(t, c, "bash", map[string]any{"command": "head -c 1073741824 /dev/zero | tr '\\0' y", "run_in_background": true})
	end := mustRun(t, c, "job_output", map[string]any{"job_id": jobID(t, out), "wait_seconds": 300, "until_exit": true})
	require.Contains(t, end, "exited with code 0")
	runtime.ReadMemStats(&after)
	assert.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(64<<20), "heap grew by more than 64 MiB")
	assert.Contains(t, end, "(cut to its beginning and end)")
}

// TestSessionSandboxTimeoutKillsTheCommand: a one-shot command of the
// session's sandbox past its timeout is killed with what it started, and
// the session serves the next one.
func TestSessionSandboxTimeoutKillsTheCommand(t *testing.T) {
	c := sessionTools(t)
	tag := fmt.Sprintf("llmtoolkit-session-timeout-%d", time.Now().UnixNano())
	began := time.Now()
	_, err := run(t, c, "bash", map[string]any{"command": fmt.Sprintf("(exec -a %s sleep 1000 &); sleep 1000", tag), "timeout": 1})
	require.ErrorIs(t, err, ErrCommandFailed)
	assert.Contains(t, err.Error(), "timed out after 1 seconds")
	assert.Less(t, time.Since(began), 10*time.Second)
	assert.Empty(t, markedPids(tag))
	assert.Equal(t, "hi", mustRun(t, c, "bash", map[string]any{"command": "echo hi"}))
}

// TestSessionSandboxServerKilled: the session's server SIGKILLed (under
// each backend), the job it ran is reported lost, the next bash call gets
// a new server and works, and a background job runs in it.
func TestSessionSandboxServerKilled(t *testing.T) {
	for _, backend := range []string{"landlock", "bubblewrap"} {
		t.Run(backend, func(t *testing.T) {
			var c *CodeTools
			if backend == "landlock" {
				c = sessionTools(t)
			} else {
				if _, err := sandbox.NewBubblewrap(); err != nil {
					t.Skipf("no bubblewrap here: %v", err)
				}
				var err error
				c, err = New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSessionSandbox(), WithBackgroundJobs(), WithSandboxRequired())
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
			}
			marker := fmt.Sprintf("61.%d", time.Now().UnixNano()%100000)
			id := jobID(t, mustRun(t, c, "bash", map[string]any{"command": "exec sleep " + marker, "run_in_background": true}))
			var pids []string
			require.Eventually(t, func() bool { pids = markedPids("sleep " + marker); return len(pids) == 1 }, 10*time.Second, 20*time.Millisecond)
			stat, err := os.ReadFile("/proc/" + pids[0] + "/stat")
			require.NoError(t, err)
			f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
			server, err := strconv.Atoi(f[1]) // the job's parent: the server that forked it
			require.NoError(t, err)
			require.NoError(t, syscall.Kill(server, syscall.SIGKILL))

			out := mustRun(t, c, "job_output", map[string]any{"job_id": id, "wait_seconds": 10})
			assert.Contains(t, out, "lost: the session's sandbox server died")
			assert.Eventually(t, func() bool { return len(markedPids("sleep "+marker)) == 0 }, 5*time.Second, 20*time.Millisecond)
			assert.Equal(t, "hi", mustRun(t, c, "bash", map[string]any{"command": "echo hi"}), "the next call gets a new server")
			started := mustRun(t, c, "bash", map[string]any{"command": "sleep 0.2; echo again", "run_in_background": true})
			log := mustRun(t, c, "job_output", map[string]any{"job_id": jobID(t, started), "wait_seconds": 10})
			assert.Contains(t, started+log, "again", "a job runs in the new server")
			assert.Contains(t, log, "exited with code 0")
			assert.Eventually(t, func() bool { return c.jobs.Running() == 0 }, 5*time.Second, 10*time.Millisecond)
		})
	}
}

// TestSessionSandboxTerminalReachesAJob: a terminal runs in the session's
// sandbox (each backend): a server a background job started answers an
// exec_command terminal's curl localhost, the network closed; Ctrl-C
// still reaches a terminal's program.
func TestSessionSandboxTerminalReachesAJob(t *testing.T) {
	for _, backend := range []string{"landlock", "bubblewrap"} {
		t.Run(backend, func(t *testing.T) {
			var c *CodeTools
			if backend == "landlock" {
				c = sessionTools(t, WithTerminals())
			} else {
				if _, err := sandbox.NewBubblewrap(); err != nil {
					t.Skipf("no bubblewrap here: %v", err)
				}
				if _, err := os.Stat("/usr/bin/python3"); err != nil {
					t.Skip("no /usr/bin/python3")
				}
				needProgram(t, "curl")
				var err error
				c, err = New(t.TempDir(), WithSandbox(SandboxPolicy{Mode: SandboxWorkspaceWrite, Backend: "bubblewrap"}), WithSessionSandbox(),
					WithBackgroundJobs(), WithTerminals(), WithSandboxRequired())
				require.NoError(t, err)
				t.Cleanup(func() { _ = c.Close() })
			}
			port := 18000 + int(time.Now().UnixNano()%1000)
			id := jobID(t, mustRun(t, c, "bash", map[string]any{"command": fmt.Sprintf("exec /usr/bin/python3 -u -m http.server %d --bind 127.0.0.1", port), "run_in_background": true}))
			require.Eventually(t, func() bool {
				got, _ := run(t, c, "bash", map[string]any{"command": fmt.Sprintf("curl -sf -o /dev/null http://127.0.0.1:%d/ && echo up", port)})
				return got == "up"
			}, 20*time.Second, 200*time.Millisecond)
			out := mustRun(t, c, "exec_command", map[string]any{"cmd": fmt.Sprintf("tr '\\0' ' ' </proc/1/cmdline; echo; test -t 0 && echo on-a-tty; curl -s -o /dev/null -w 'code=%%{http_code}\\n' http://localhost:%d/", port),
				"tty": true, "yield_time_ms": 10000})
			assert.Contains(t, out, "Process exited with code 0")
			assert.Contains(t, out, "on-a-tty")
			assert.Contains(t, out, `"stage":"server"`, "forked by the session's server: the init of the session's PID namespace, whose /proc it shares")
			assert.Contains(t, out, "code=200", "the terminal is in the session's network")

			out = mustRun(t, c, "exec_command", map[string]any{"cmd": "/usr/bin/python3 -c 'import time; print(\"ready\", flush=True); time.sleep(60)'", "tty": true, "yield_time_ms": 3000})
			require.Contains(t, out, "ready")
			sid := idIn(t, regexp.MustCompile(`session ID (\d+)`), out)
			out = mustRun(t, c, "write_stdin", map[string]any{"session_id": sid, "chars": "\x03", "yield_time_ms": 5000})
			assert.Contains(t, out, "KeyboardInterrupt", "Ctrl-C reaches the terminal's program")
			// A program that does not catch SIGINT, run directly (bash -c
			// execs it): Ctrl-C ends it, as on any terminal, although its
			// PID namespace's init ignores such signals.
			out = mustRun(t, c, "exec_command", map[string]any{"cmd": "sleep 100", "tty": true, "yield_time_ms": 300})
			sid = idIn(t, regexp.MustCompile(`session ID (\d+)`), out)
			out = mustRun(t, c, "write_stdin", map[string]any{"session_id": sid, "chars": "\x03", "yield_time_ms": 5000})
			assert.Contains(t, out, "Process exited with code 130", "Ctrl-C ends sleep")
			mustRun(t, c, "job_kill", map[string]any{"job_id": id})
			assert.Eventually(t, func() bool { return c.jobs.Running() == 0 }, 10*time.Second, 20*time.Millisecond)
		})
	}
}
