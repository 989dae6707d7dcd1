//go:build linux

package crashtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/mock"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/durable/temporal"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// childEnv carries a child worker's spec (JSON): the test runs its own
// binary as the worker it kills and as the one that resumes.
const childEnv = "LLMTOOLKIT_TEMPORAL_CRASH_CHILD"

// childSpec is what a child worker does. Dir holds the tree (Dir/tree),
// the checkpoint store, the history the first worker leaves and the
// logs; Block names the call inside which the worker stops (after the
// call wrote its file) until it is killed; Resume makes the worker go on
// from the history the first one left.
type childSpec struct {
	Dir    string `json:"dir"`
	Block  string `json:"block,omitempty"`
	Resume bool   `json:"resume,omitempty"`
}

const (
	workflowID = "run-1"
	tenant     = "tenant-1"
	conv       = "conversation-1"
)

func TestMain(m *testing.M) {
	if s := os.Getenv(childEnv); s != "" {
		var spec childSpec
		if err := json.Unmarshal([]byte(s), &spec); err != nil {
			fmt.Fprintln(os.Stderr, "crashtest child:", err)
			os.Exit(2)
		}
		if err := child(spec); err != nil {
			fmt.Fprintln(os.Stderr, "crashtest child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// model asks for one write per turn, call-1 to call-3, then answers.
func model(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
	turn := 1
	for _, m := range msgs {
		if m.Role == agentloop.RoleAssistant {
			turn++
		}
	}
	if turn > 3 {
		return agentloop.Response{Content: "done", StopReason: "stop"}, nil
	}
	id := fmt.Sprintf("call-%d", turn)
	return agentloop.Response{StopReason: "tool_calls", ToolCalls: []llmtoolkit.Call{{ID: id, Name: "write", Arguments: map[string]any{"name": id}}}}, nil
}

func appendLine(path, line string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteString(line + "\n"); err != nil {
		return err
	}
	return f.Sync()
}

func checkpointer(dir string) (*checkpoint.Checkpointer, error) {
	db, err := checkpoint.OpenSQLite(filepath.Join(dir, "checkpoints.db"))
	if err != nil {
		return nil, err
	}
	s, err := checkpoint.NewStore(db)
	if err != nil {
		return nil, err
	}
	return checkpoint.New(s, filepath.Join(dir, "tree"), checkpoint.WithRootName("tree"))
}

// recorded is one completed activity of the history: what Temporal's
// server keeps, so that a worker resuming the run does not run it again.
type recorded struct {
	ID     string          `json:"id"`
	Result json.RawMessage `json:"result"`
}

// child is one worker: it runs the workflow in the SDK's test
// environment, the tools wrapped by checkpoint.Resolver, each call
// writing a file named after it. The first records every completed
// activity (its result) to Dir/history.jsonl as it completes; the one
// that resumes answers those from it and runs the others (the one in
// flight at the kill is run again, as Temporal retries an activity whose
// worker died).
func child(spec childSpec) error {
	tree := filepath.Join(spec.Dir, "tree")
	c, err := checkpointer(spec.Dir)
	if err != nil {
		return err
	}
	tools := llmtoolkittest.NewFake(nil).Handle("write", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		if err := appendLine(filepath.Join(spec.Dir, "effects.log"), call.ID); err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(tree, call.ID), []byte("written by "+call.ID+"\n"), 0o644); err != nil {
			return "", err
		}
		if call.ID == spec.Block {
			if err := os.WriteFile(filepath.Join(spec.Dir, "blocked"), nil, 0o600); err != nil {
				return "", err
			}
			<-ctx.Done() // until the SIGKILL
			return "", ctx.Err()
		}
		return "wrote " + call.ID, nil
	})
	acts := &temporal.Activities{Send: model, Options: agentloop.Options{Resolver: checkpoint.Resolver(tools, c, checkpoint.WithRequired())}}

	var s testsuite.WorkflowTestSuite
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(2 * time.Minute)
	env.SetStartWorkflowOptions(client.StartWorkflowOptions{ID: workflowID})
	if err := temporal.Register(env, acts); err != nil {
		return err
	}
	histPath := filepath.Join(spec.Dir, "history.jsonl")
	if !spec.Resume {
		var werr error
		env.SetOnActivityCompletedListener(func(info *activity.Info, result converter.EncodedValue, err error) {
			if err != nil || werr != nil {
				return
			}
			var v any
			if info.ActivityType.Name == temporal.ModelActivityName {
				v = new(temporal.ModelResult)
			} else {
				v = new(agentloop.ToolOutcome)
			}
			if werr = result.Get(v); werr == nil {
				var b []byte
				if b, werr = json.Marshal(v); werr == nil {
					line, _ := json.Marshal(recorded{ID: info.ActivityID, Result: b})
					werr = appendLine(histPath, string(line))
				}
			}
		})
	} else {
		hist := map[string]json.RawMessage{}
		f, err := os.Open(histPath)
		if err != nil {
			return err
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			var r recorded
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
				return err
			}
			hist[r.ID] = r.Result
		}
		f.Close()
		if err := sc.Err(); err != nil {
			return err
		}
		if err := appendLine(filepath.Join(spec.Dir, "replayed.log"), fmt.Sprint(len(hist))); err != nil {
			return err
		}
		env.OnActivity(temporal.ModelActivityName, mock.Anything, mock.Anything).Return(
			func(ctx context.Context, in temporal.ModelInput) (temporal.ModelResult, error) {
				var r temporal.ModelResult
				if b, ok := hist[activity.GetInfo(ctx).ActivityID]; ok {
					return r, json.Unmarshal(b, &r)
				}
				return acts.ModelCall(ctx, in)
			})
		env.OnActivity(temporal.ToolActivityName, mock.Anything, mock.Anything).Return(
			func(ctx context.Context, in temporal.ToolInput) (agentloop.ToolOutcome, error) {
				var r agentloop.ToolOutcome
				if b, ok := hist[activity.GetInfo(ctx).ActivityID]; ok {
					return r, json.Unmarshal(b, &r)
				}
				return acts.ToolCall(ctx, in)
			})
	}
	env.ExecuteWorkflow(temporal.WorkflowName, temporal.RunInput{
		Messages: []agentloop.Message{agentloop.UserMessage("write three files")},
		Session:  map[string]any{checkpoint.SessionTenantID: tenant, checkpoint.SessionConversationID: conv},
	})
	if !env.IsWorkflowCompleted() {
		return errors.New("the workflow did not complete")
	}
	if err := env.GetWorkflowError(); err != nil {
		return err
	}
	var out temporal.RunOutput
	if err := env.GetWorkflowResult(&out); err != nil {
		return err
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(spec.Dir, "result.json"), b, 0o600)
}

type proc struct {
	cmd *exec.Cmd
	out *strings.Builder
}

func startChild(t *testing.T, spec childSpec) *proc {
	t.Helper()
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	require.NoError(t, cmd.Start())
	p := &proc{cmd: cmd, out: out}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			_ = p.cmd.Process.Kill()
			_ = p.cmd.Wait()
		}
	})
	return p
}

func lines(t *testing.T, path string) map[string]int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	m := map[string]int{}
	for _, l := range strings.Fields(string(b)) {
		m[l]++
	}
	return m
}

// TestCrashResumeKeepsOneCheckpointPerTurn: a Temporal run (the SDK's
// test environment, in a child worker) with its tools wrapped by
// checkpoint.Resolver, each call writing a file named after it. The
// worker is SIGKILLed inside call-2 after the call wrote its file; a
// second worker resumes the run from the history the first left (the
// completed activities answered from it, call-2's activity run again).
// The resumed turn 2 keeps the checkpoint its first attempt took (the
// tree before call-2 wrote: the workflow ID, agent and iteration key it),
// so the store holds one turn checkpoint per turn, attributed to the
// run's tenant and conversation; rewinding to each gives the tree as that
// turn began (by an independent walker), and undoing the rewind gives the
// end state back.
func TestCrashResumeKeepsOneCheckpointPerTurn(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	ctx := context.Background()
	dir := t.TempDir()
	tree := filepath.Join(dir, "tree")
	testkit.WriteFiles(t, tree, map[string]string{"seed": "before the run\n"})

	first := startChild(t, childSpec{Dir: dir, Block: "call-2"})
	deadline := time.Now().Add(90 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(dir, "blocked")); err == nil {
			break
		}
		require.True(t, time.Now().Before(deadline), "the first worker never reached call-2: %s", first.out)
		time.Sleep(20 * time.Millisecond)
	}
	require.FileExists(t, filepath.Join(tree, "call-2"), "call-2 wrote its file before the kill")
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGKILL))
	_ = first.cmd.Wait()

	second := startChild(t, childSpec{Dir: dir, Resume: true})
	require.NoError(t, second.cmd.Wait(), second.out.String())
	b, err := os.ReadFile(filepath.Join(dir, "result.json"))
	require.NoError(t, err, second.out.String())
	var out temporal.RunOutput
	require.NoError(t, json.Unmarshal(b, &out))
	require.NoError(t, out.Error())
	assert.Equal(t, "done", out.Response.Content)
	assert.Equal(t, map[string]int{"call-1": 1, "call-2": 2, "call-3": 1}, lines(t, filepath.Join(dir, "effects.log")),
		"only call-2, in flight at the kill, ran twice")
	assert.Equal(t, map[string]int{"3": 1}, lines(t, filepath.Join(dir, "replayed.log")),
		"the resumed worker answered model/1, call-1 and model/2 from the history")

	c, err := checkpointer(dir)
	require.NoError(t, err)
	list, err := c.List(ctx, checkpoint.Filter{})
	require.NoError(t, err)
	sort.Slice(list, func(i, j int) bool { return list[i].Iteration < list[j].Iteration })
	var iterations []int
	for _, cp := range list {
		assert.Equal(t, checkpoint.KindTurn, cp.Kind)
		assert.True(t, strings.HasPrefix(cp.Key, "turn/"+workflowID+"//"), "keyed by the run: %q", cp.Key)
		assert.Equal(t, tenant, cp.TenantID, "the run's tenant")
		assert.Equal(t, conv, cp.ConversationID, "the run's conversation")
		iterations = append(iterations, cp.Iteration)
	}
	require.Equal(t, []int{1, 2, 3}, iterations, "one checkpoint per turn, not two for the resumed one")
	for i, cp := range list {
		assert.Equal(t, fmt.Sprintf("call-%d", i+1), cp.CallID)
	}
	end := testkit.TreeLines(t, tree)

	files := []string{"call-1", "call-2", "call-3"}
	for i, cp := range list {
		r, err := c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, r.Exact)
		want := map[string]string{"seed": "before the run\n"}
		for _, f := range files[:i] {
			want[f] = "written by " + f + "\n"
		}
		expect := filepath.Join(t.TempDir(), "expect")
		testkit.WriteFiles(t, expect, want)
		assert.Equal(t, testkit.TreeLines(t, expect), testkit.TreeLines(t, tree), "turn %d's tree: call-2's first write is not in it", cp.Iteration)
		undo, err := c.Rewind(ctx, r.Before.ID, checkpoint.RewindOptions{})
		require.NoError(t, err)
		assert.True(t, undo.Exact)
		assert.Equal(t, end, testkit.TreeLines(t, tree), "the rewind undone")
	}
}
