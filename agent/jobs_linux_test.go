package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// jobTools are codetools with background jobs and terminals, in a fresh
// folder holding the file keep.
func jobTools(t *testing.T) (*codetools.CodeTools, string) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "keep"), []byte("x"), 0o644))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "secrets"), 0o755))
	code, err := codetools.New(dir, codetools.WithBackgroundJobs(), codetools.WithTerminals())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	return code, dir
}

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

// TestJobCommandsCheckedAsBash: a rule on bash's command holds for every
// tool that runs or types a command: bash in the background,
// exec_command's cmd, and the lines write_stdin enters into a terminal
// (typed over several calls, corrected with backspace); an allow rule on
// bash lets exec_command run without asking, never a typed line; path
// rules see exec_command's workdir.
func TestJobCommandsCheckedAsBash(t *testing.T) {
	code, dir := jobTools(t)
	var mu sync.Mutex
	var asked []string
	perms := newPerms(t, agent.Config{
		Deny: []agent.Rule{
			{Tool: "bash", Argument: "command", Regexp: `rm\s+-rf`},
			{Tool: "*", Argument: "path", Glob: "secrets/**"},
		},
		Allow: []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^(bash|echo [a-z]+)$`}},
		CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, call.Name)
			return agent.Allow()
		},
	})
	tools := perms.Guard(code)
	run := func(name string, args map[string]any) llmtoolkit.Result {
		return llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: name, Name: name, Arguments: args})
	}
	denied := func(t *testing.T, res llmtoolkit.Result, rule string) {
		t.Helper()
		require.True(t, res.IsError, res.Content)
		require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied, res.Content)
		assert.Contains(t, res.Content, rule)
	}
	for name, call := range map[string]llmtoolkit.Call{
		"bash in the background": {Name: "bash", Arguments: map[string]any{"command": "rm -rf keep", "run_in_background": true}},
		"exec_command":           {Name: "exec_command", Arguments: map[string]any{"cmd": "rm  -rf keep"}},
		"exec_command tty":       {Name: "exec_command", Arguments: map[string]any{"cmd": "sleep 1; rm -rf keep", "tty": true}},
	} {
		t.Run(name, func(t *testing.T) { denied(t, run(call.Name, call.Arguments), `regexp "rm\\s+-rf"`) })
	}
	t.Run("workdir", func(t *testing.T) {
		denied(t, run("exec_command", map[string]any{"cmd": "ls", "workdir": "secrets"}), `secrets/**`)
		denied(t, run("exec_command", map[string]any{"cmd": "ls", "workdir": "../"}), "would refuse argument workdir")
	})

	// An allowed shell, then the lines typed into it.
	res := run("exec_command", map[string]any{"cmd": "bash", "tty": true, "yield_time_ms": 500})
	require.False(t, res.IsError, res.Content)
	sid := idIn(t, `session ID (\d+)`, res.Content)
	mu.Lock()
	assert.Empty(t, asked, "exec_command of an allowed command is not asked")
	mu.Unlock()
	res = run("write_stdin", map[string]any{"session_id": sid, "chars": "rm -r"})
	require.False(t, res.IsError, "no Enter yet: nothing is entered: %s", res.Content)
	denied(t, run("write_stdin", map[string]any{"session_id": sid, "chars": "f keep\r"}), "forbids the command this call types")
	denied(t, run("write_stdin", map[string]any{"session_id": sid, "chars": "\x15rm -rX\x7ff keep\n"}), "types")
	res = run("write_stdin", map[string]any{"session_id": sid, "chars": "\x15echo hi\r", "yield_time_ms": 500})
	require.False(t, res.IsError, res.Content)
	mu.Lock()
	assert.Equal(t, []string{"write_stdin", "write_stdin"}, asked, "typed lines are asked, whatever bash's allow rules: the host allows a terminal as a whole")
	mu.Unlock()
	assert.FileExists(t, filepath.Join(dir, "keep"))
}

// TestSubAgentJobsAreTheirs: a job a sub-agent starts is its own: the
// parent, another session and another sub-agent neither list, read,
// type into nor stop it; the sub-agent itself does, and the job ends when
// the sub-agent does.
func TestSubAgentJobsAreTheirs(t *testing.T) {
	code, _ := jobTools(t)
	var mu sync.Mutex
	results := map[string][]string{} // agent id: what its calls answered
	var job int                      // the first sub-agent's job, read from its answer
	sub := lt.NewScriptedModel(t,
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "b", Name: "bash", Arguments: map[string]any{"command": "echo started; sleep 60", "run_in_background": true}}}}},
		lt.Turn{Response: agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "l", Name: "job_list", Arguments: map[string]any{}}}}},
		lt.Reply("started a job"),
		// The second sub-agent.
		lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
			mu.Lock()
			defer mu.Unlock()
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "k", Name: "job_kill", Arguments: map[string]any{"job_id": job}}}}, nil
		}),
		lt.Reply("could not"),
	)
	ids := []string{"sub-2", "sub-1"}
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: code, AllowMutating: true,
		NewID: func() string { mu.Lock(); defer mu.Unlock(); id := ids[len(ids)-1]; ids = ids[:len(ids)-1]; return id },
		OnEvent: func(id string, e agentloop.Event) {
			if e.Kind == agentloop.EventToolResult {
				mu.Lock()
				results[id] = append(results[id], e.Result.Content)
				mu.Unlock()
			}
		}})
	session := func(conv string) context.Context {
		return llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"conversation_id": conv} })
	}
	ctx := session("c1")
	res := llmtoolkit.Execute(ctx, spawn, spawnCall("Start the server."))
	require.False(t, res.IsError, res.Content)
	mu.Lock()
	require.Len(t, results["sub-1"], 2)
	job = idIn(t, `Started job (\d+)`, results["sub-1"][0])
	assert.Contains(t, results["sub-1"][1], strconv.Itoa(job)+": running", "the sub-agent lists its job")
	mu.Unlock()

	for name, ctx := range map[string]context.Context{"parent": ctx, "other session": session("c2")} {
		t.Run(name, func(t *testing.T) {
			list := llmtoolkit.Execute(ctx, code, llmtoolkit.Call{ID: "l", Name: "job_list", Arguments: map[string]any{}})
			assert.Equal(t, "No jobs.", list.Content)
			for tool, args := range map[string]map[string]any{
				"job_output":  {"job_id": job},
				"job_kill":    {"job_id": job},
				"write_stdin": {"session_id": job, "chars": "x\n"},
			} {
				res := llmtoolkit.Execute(ctx, code, llmtoolkit.Call{ID: tool, Name: tool, Arguments: args})
				require.True(t, res.IsError, "%s: %s", tool, res.Content)
				assert.ErrorIs(t, res.Err, codetools.ErrNoJob, tool)
			}
		})
	}
	res = llmtoolkit.Execute(ctx, spawn, spawnCall("Stop the server."))
	require.False(t, res.IsError, res.Content)
	mu.Lock()
	require.Len(t, results["sub-2"], 1)
	assert.Contains(t, results["sub-2"][0], "no such job", "another sub-agent cannot stop it")
	mu.Unlock()

	// The job ended with its sub-agent (nobody else may reach it): its
	// own scope sees it killed, and no process of it is left.
	own := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = "sub-1" })
	var list string
	require.Eventually(t, func() bool {
		list = llmtoolkit.Execute(own, code, llmtoolkit.Call{ID: "l", Name: "job_list", Arguments: map[string]any{}}).Content
		return strings.Contains(list, "killed (its sub-agent ended)")
	}, 10*time.Second, 50*time.Millisecond, list)
	out := llmtoolkit.Execute(own, code, llmtoolkit.Call{ID: "k", Name: "job_kill", Arguments: map[string]any{"job_id": job}})
	assert.NotContains(t, out.Content, "running", out.Content)
}
