package dbos

import (
	"context"
	"encoding/json"
	"fmt"
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
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// jobsAgent is the jobs crash test's agent: turn 1 starts a background
// job (a sleep named after the test's folder), turn 2 waits for its end with
// job_output (the call the first process is killed in), turn 3 writes
// the answer it read to seen.log and ends.
func jobsAgent(spec childSpec) AgentFunc {
	return func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		code, err := codetools.New(spec.Dir, codetools.WithBackgroundJobs(), codetools.WithTerminals())
		if err != nil {
			return nil, agentloop.Options{}, err
		}
		context.AfterFunc(ctx, func() { code.Close() })
		send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			turn := 0
			for _, m := range msgs {
				if m.Role == agentloop.RoleAssistant {
					turn++
				}
			}
			switch turn {
			case 0:
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call-1", Name: "bash", Arguments: map[string]any{
					"command": "exec -a " + jobMarker(spec.Dir) + " sleep 600", "run_in_background": true}}}}, nil
			case 1: // the job's id, read from bash's answer
				m := regexp.MustCompile(`Started job (\d+)`).FindStringSubmatch(msgs[len(msgs)-1].Content)
				if m == nil {
					return agentloop.Response{}, fmt.Errorf("no job id in %q", msgs[len(msgs)-1].Content)
				}
				id, _ := strconv.Atoi(m[1])
				return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call-2", Name: "job_output", Arguments: map[string]any{
					"job_id": id, "wait_seconds": 600, "until_exit": true}}}}, nil
			}
			last := msgs[len(msgs)-1]
			if err := appendLine(spec.Dir, "seen.log", strconv.Quote(last.Content)+" "+strconv.FormatBool(last.IsError)); err != nil {
				return agentloop.Response{}, err
			}
			return agentloop.Response{Content: "done", StopReason: "stop"}, nil
		}
		resolver := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			if call.ID == spec.Block {
				if err := os.WriteFile(filepath.Join(spec.Dir, "blocked"), nil, 0o644); err != nil {
					return "", err
				}
			}
			return code.Resolve(ctx, call)
		})
		return send, agentloop.Options{Resolver: llmtoolkit.Indexed(resolver, code.Tools())}, nil
	}
}

// TestCrashResumeLosesJobs: a run whose process is SIGKILLed while it
// waits on a background job resumes in a new process, where the job's
// next call (job_output, replayed live) is answered at once that the job
// was lost, and the run ends; the job's processes did not outlive the
// killed host.
func TestCrashResumeLosesJobs(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			spec := childSpec{DB: db(t), Dir: dir, Run: "run-jobs", Executor: "a", Start: true, Block: "call-2", Agent: "jobs"}
			first := startChild(t, spec)
			waitFile(t, first, filepath.Join(dir, "blocked"), 60*time.Second)
			time.Sleep(200 * time.Millisecond) // job_output is waiting
			require.NotEmpty(t, processesNamed(t, jobMarker(dir)), "the job runs")
			first.kill(t)

			spec.Start, spec.Block = false, ""
			began := time.Now()
			second := startChild(t, spec)
			second.wait(t, 90*time.Second)
			t.Logf("resumed and ended in %v", time.Since(began))
			b, err := os.ReadFile(filepath.Join(dir, "result-a.json"))
			require.NoError(t, err, second.output())
			var res Result
			require.NoError(t, json.Unmarshal(b, &res))
			assert.Equal(t, "done", res.Response.Content)
			assert.Nil(t, res.Error)
			seen := lines(t, dir, "seen.log")
			require.Len(t, seen, 1)
			for line := range seen {
				assert.Contains(t, line, "was lost", "the resumed call says the job is gone")
				assert.True(t, strings.HasSuffix(line, " true"), "as an error: %s", line)
			}
			require.Eventually(t, func() bool { return len(processesNamed(t, jobMarker(dir))) == 0 },
				10*time.Second, 50*time.Millisecond, "the job's process outlived the killed host")
		})
	}
}

// jobMarker is the name the job's process runs under.
func jobMarker(dir string) string { return "jobs-crash-" + filepath.Base(dir) }

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
