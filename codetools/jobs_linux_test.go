package codetools

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

var jobIDRe = regexp.MustCompile(`job (\d+)`)

// jobID reads the job id from bash's answer.
func jobID(t *testing.T, answer string) int { return idIn(t, jobIDRe, answer) }

// idIn reads the number re's first group matches in answer.
func idIn(t *testing.T, re *regexp.Regexp, answer string) int {
	t.Helper()
	m := re.FindStringSubmatch(answer)
	require.NotNil(t, m, "no %s in %q", re, answer)
	id, err := strconv.Atoi(m[1])
	require.NoError(t, err)
	return id
}

// freePort returns a loopback port nothing listens on.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("python3 is missing: the CI image must have it")
		}
		t.Skip("python3 is missing")
	}
}

func TestJobToolsAreOptIn(t *testing.T) {
	plain := newTools(t)
	assert.Len(t, plain.Tools(), 12)
	bash, _ := plain.LookupTool("bash")
	assert.NotContains(t, fmt.Sprint(bash.Parameters), "run_in_background")
	_, err := run(t, plain, "job_list", nil)
	require.Error(t, err)

	on := newTools(t, WithBackgroundJobs())
	var names []string
	for _, tool := range on.Tools() {
		names = append(names, tool.Name)
	}
	assert.Subset(t, names, []string{"job_output", "job_list", "job_kill"})
	assert.Len(t, names, 15)
	bash, _ = on.LookupTool("bash")
	assert.Contains(t, fmt.Sprint(bash.Parameters), "run_in_background")
	assert.Contains(t, bash.Description, "after 1h0m0s")
}

// TestBackgroundServerAnswersALaterCall is the proof: a dev
// server started in the background answers a later call, its log is
// read, it is stopped, and nothing is left.
func TestBackgroundServerAnswersALaterCall(t *testing.T) {
	needPython(t)
	c := newTools(t, WithBackgroundJobs())
	port := freePort(t)
	out := mustRun(t, c, "bash", map[string]any{"command": fmt.Sprintf("exec python3 -u -m http.server %d --bind 127.0.0.1", port), "run_in_background": true})
	id := jobID(t, out)
	assert.Contains(t, out, "Started job")
	require.Eventually(t, func() bool {
		_, err := run(t, c, "bash", map[string]any{"command": fmt.Sprintf("curl -sf http://127.0.0.1:%d/ >/dev/null", port)})
		return err == nil
	}, 20*time.Second, 100*time.Millisecond, "the server never answered")
	log := mustRun(t, c, "job_output", map[string]any{"job_id": id, "wait_seconds": 5})
	assert.Contains(t, log, `"GET / HTTP/1.1" 200`)
	assert.Contains(t, log, "running for")
	list := mustRun(t, c, "job_list", nil)
	assert.Contains(t, list, fmt.Sprintf("%d: running", id))
	assert.Contains(t, list, "http.server")
	kill := mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	assert.Contains(t, kill, "killed (stopped)")
	_, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	require.Error(t, err, "the server is gone")
	again := mustRun(t, c, "job_output", map[string]any{"job_id": id})
	assert.Contains(t, again, "(no new output)")
}

func TestJobOutputWaitsForTheEnd(t *testing.T) {
	c := newTools(t, WithBackgroundJobs())
	out := mustRun(t, c, "bash", map[string]any{"command": "echo one; sleep 0.5; echo two; exit 4", "run_in_background": true})
	id := jobID(t, out)
	assert.Contains(t, out, "one")
	end := mustRun(t, c, "job_output", map[string]any{"job_id": id, "wait_seconds": 30, "until_exit": true})
	assert.Contains(t, end, "exited with code 4")
	assert.Contains(t, end, "two")
	assert.NotContains(t, end, "one", "only the new output")
}

func TestAutoBackgroundKeepsASlowCommand(t *testing.T) {
	c := newTools(t, WithBashAutoBackground(3*time.Second)) // generous: the race pass starts commands slowly
	fast := mustRun(t, c, "bash", map[string]any{"command": "echo quick"})
	assert.Equal(t, "quick", fast, "a command that ends in time answers as bash does")
	_, err := run(t, c, "bash", map[string]any{"command": "echo bad; exit 2"})
	require.ErrorIs(t, err, ErrCommandFailed)
	assert.Contains(t, err.Error(), "Command exited with code 2")
	slow := mustRun(t, c, "bash", map[string]any{"command": "echo started; sleep 1000"})
	assert.Contains(t, slow, "goes on in the background as job")
	id := jobID(t, slow)
	mustRun(t, c, "job_kill", map[string]any{"job_id": id})
	// The timeout comes first: killed as before.
	_, err = run(t, NewOrFail(t, WithBashAutoBackground(5*time.Second), WithBashTimeout(time.Second, time.Second)), "bash", map[string]any{"command": "sleep 1000"})
	require.ErrorIs(t, err, ErrCommandFailed)
	assert.Contains(t, err.Error(), "timed out after 1 seconds")
}

// NewOrFail returns tools over a fresh root.
func NewOrFail(t *testing.T, opts ...Option) *CodeTools { return newTools(t, opts...) }

func TestAnotherAgentsJobIsOutOfReach(t *testing.T) {
	c := newTools(t, WithBackgroundJobs())
	sub := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-1" })
	out, err := c.Resolve(sub, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "sleep 1000", "run_in_background": true}})
	require.NoError(t, err)
	id := jobID(t, out)
	for _, tool := range []string{"job_output", "job_kill"} {
		_, err := run(t, c, tool, map[string]any{"job_id": id})
		require.ErrorIs(t, err, ErrNoJob, tool)
	}
	assert.Equal(t, "No jobs.", mustRun(t, c, "job_list", nil))
	_, err = c.Resolve(sub, llmtoolkit.Call{Name: "job_kill", Arguments: map[string]any{"job_id": id}})
	require.NoError(t, err)
}

func TestCloseEndsEveryJob(t *testing.T) {
	c, err := New(t.TempDir(), WithBackgroundJobs())
	require.NoError(t, err)
	port := freePort(t)
	needPython(t)
	mustRun(t, c, "bash", map[string]any{"command": fmt.Sprintf("exec python3 -m http.server %d --bind 127.0.0.1", port), "run_in_background": true})
	require.Eventually(t, func() bool {
		conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			conn.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond)
	require.NoError(t, c.Close())
	_, err = net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
	require.Error(t, err, "Close ended the server")
	_, err = run(t, c, "bash", map[string]any{"command": "true", "run_in_background": true})
	require.Error(t, err)
}

func TestTooManyJobsIsRefused(t *testing.T) {
	c := newTools(t, WithJobLimits(JobLimits{MaxJobs: 2}), WithBackgroundJobs())
	for range 2 {
		mustRun(t, c, "bash", map[string]any{"command": "sleep 1000", "run_in_background": true})
	}
	_, err := run(t, c, "bash", map[string]any{"command": "sleep 1000", "run_in_background": true})
	require.ErrorIs(t, err, ErrTooManyJobs)
	assert.Contains(t, err.Error(), "stop one first")
}

// TestManyConcurrentJobs runs 64 jobs at once, each read and stopped.
func TestManyConcurrentJobs(t *testing.T) {
	requireStress(t)
	c := newTools(t, WithJobLimits(JobLimits{MaxJobs: 64}), WithBackgroundJobs())
	var wg sync.WaitGroup
	ids := make([]int, 64)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := run(t, c, "bash", map[string]any{"command": fmt.Sprintf("echo job-%d; sleep 1000", i), "run_in_background": true})
			if assert.NoError(t, err) {
				ids[i] = jobID(t, out)
			}
		}()
	}
	wg.Wait()
	for i, id := range ids {
		got := mustRun(t, c, "job_kill", map[string]any{"job_id": id})
		_ = got
		out := mustRun(t, c, "job_list", nil)
		assert.Contains(t, out, fmt.Sprintf("%d: killed", id), "job %d", i)
	}
}

// TestAJobPrintingAGibibyteStaysBounded: memory stays bounded by the
// ring and the log by its cap.
func TestAJobPrintingAGibibyteStaysBounded(t *testing.T) {
	requireStress(t)
	c := newTools(t, WithBackgroundJobs(), WithBashSpillLimit(4<<20))
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	out := mustRun(t, c, "bash", map[string]any{"command": "head -c 1073741824 /dev/zero | tr '\\0' y", "run_in_background": true})
	id := jobID(t, out)
	end := mustRun(t, c, "job_output", map[string]any{"job_id": id, "wait_seconds": 300, "until_exit": true})
	require.Contains(t, end, "exited with code 0")
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	assert.Less(t, int64(after.HeapInuse)-int64(before.HeapInuse), int64(64<<20), "heap grew by more than 64 MiB")
	assert.Contains(t, end, "not shown; all of it is in")
	assert.Contains(t, end, "(cut to its beginning and end)")
	log := regexp.MustCompile(`kept in (\S+\.log)`).FindStringSubmatch(end)
	require.NotNil(t, log)
	fi, err := os.Stat(log[1])
	require.NoError(t, err)
	assert.LessOrEqual(t, fi.Size(), int64(4<<20))
	assert.True(t, strings.HasPrefix(strings.TrimSpace(end[strings.LastIndex(end, "\n")+1:]), "yyy"))
}

// TestJobLostAfterRestart: tools made anew (a host restarted, a durable
// run resumed in another process) answer a call on a job the old ones
// started at once, saying it was lost, whatever the wait asked; a job id
// they gave that is not the caller's stays merely unknown.
func TestJobLostAfterRestart(t *testing.T) {
	before := newTools(t, WithBackgroundJobs(), WithTerminals())
	res := llmtoolkit.Execute(t.Context(), before, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "sleep 60", "run_in_background": true}})
	require.False(t, res.IsError, res.Content)
	old := jobID(t, res.Content)
	require.NoError(t, before.Close())

	after := newTools(t, WithBackgroundJobs(), WithTerminals())
	for tool, args := range map[string]map[string]any{
		"job_output":  {"job_id": old, "wait_seconds": 600, "until_exit": true},
		"write_stdin": {"session_id": old, "chars": "x\n", "yield_time_ms": 300000},
		"job_kill":    {"job_id": old},
	} {
		t.Run(tool, func(t *testing.T) {
			began := time.Now()
			res := llmtoolkit.Execute(t.Context(), after, llmtoolkit.Call{Name: tool, Arguments: args})
			require.True(t, res.IsError, res.Content)
			assert.ErrorIs(t, res.Err, ErrJobLost)
			assert.ErrorIs(t, res.Err, ErrNoJob)
			assert.Contains(t, res.Content, "was lost")
			assert.Less(t, time.Since(began), time.Second, "never a wait")
		})
	}
	res = llmtoolkit.Execute(t.Context(), after, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "sleep 60", "run_in_background": true}})
	require.False(t, res.IsError, res.Content)
	assert.NotEqual(t, old, jobID(t, res.Content), "an id is never given twice")
	other := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-1" })
	res = llmtoolkit.Execute(other, after, llmtoolkit.Call{Name: "job_output", Arguments: map[string]any{"job_id": jobID(t, res.Content)}})
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, ErrNoJob)
	assert.NotErrorIs(t, res.Err, ErrJobLost, "a job of this host's, another's: unknown, not lost")
}
