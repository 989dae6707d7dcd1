package dbos

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
	"strings"
	"sync"
	"testing"
	"time"

	transact "github.com/dbos-inc/dbos-transact-golang/dbos"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/trace"
	"github.com/stretchr/testify/require"
)

// The crash test's child process: the test binary run again with
// childEnv set runs childMain instead of the tests.
const childEnv = "LLMTOOLKIT_DBOS_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if os.Getenv(replicaEnv) != "" {
		os.Exit(replicaMain())
	}
	os.Exit(m.Run())
}

// quietLogger keeps DBOS's and the loop's warnings and errors only.
func quietLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
}

// testTenant is the tenant of the crash test's runs.
const testTenant = "0b6f5c2e-7d1a-4f3b-9c8e-2a1d3e4f5a6b"

// childSpec is what a child process does, passed in its environment.
type childSpec struct {
	DB         string `json:"db"`                 // the system database URL
	Dir        string `json:"dir"`                // where the counters are written
	Run        string `json:"run"`                // the run ID
	Executor   string `json:"executor"`           // this process's executor ID
	Start      bool   `json:"start"`              // start the run (else: only resume)
	Recover    string `json:"recover"`            // take over the runs of this executor after Launch
	Block      string `json:"block"`              // the call ID whose tool blocks once it has done its side effect
	Plain      bool   `json:"plain"`              // no executor: the loop without steps
	Idempotent bool   `json:"idempotent"`         // tools skip a side effect their call ID already did
	GoFile     string `json:"go,omitempty"`       // wait for this file before recovering (races)
	TraceDB    string `json:"trace_db,omitempty"` // record the tool calls with package trace in this SQLite file
	Agent      string `json:"agent,omitempty"`    // resume with another agent: "tools" (another tool), "schema" (another schema), "options" (other loop bounds); "jobs": jobsAgent; "workspace": workspaceAgent
	Context    bool   `json:"context,omitempty"`  // run contextAgent: a long run under a context budget
	Policy     string `json:"policy,omitempty"`   // contextAgent with another policy: "budget" (a larger budget), "no summarizer"
	// Checkpoints: the tool also writes a file named after its call into
	// Dir/tree, and the resolver is wrapped by checkpoint.Resolver on that
	// tree (the store beside the system database: checkpointStore).
	Checkpoints bool `json:"checkpoints,omitempty"`
}

// The scripted conversation: 4 model calls; turns 1 and 2 call one tool,
// turn 3 calls two at once, turn 4 answers.
var script = [][]string{{"call-1"}, {"call-2"}, {"call-3a", "call-3b"}, nil}

// appendLine appends line to the file name in dir (O_APPEND: lines of
// concurrent writers never mix).
func appendLine(dir, name, line string) error {
	f, err := os.OpenFile(filepath.Join(dir, name), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.WriteString(line + "\n")
	return errors.Join(err, f.Close())
}

// readCounts counts the lines of the file name in dir, by text.
func readCounts(dir, name string) (map[string]int, error) {
	counts := map[string]int{}
	f, err := os.Open(filepath.Join(dir, name))
	if errors.Is(err, os.ErrNotExist) {
		return counts, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		counts[sc.Text()]++
	}
	return counts, sc.Err()
}

// lines counts the lines of the file name in dir, by text.
func lines(t testing.TB, dir, name string) map[string]int {
	t.Helper()
	counts, err := readCounts(dir, name)
	require.NoError(t, err)
	return counts
}

// scriptedAgent is the crash test's agent: a model that answers from the
// history alone and counts its calls in model.log, and the tool "append",
// whose side effect is a line in effects.log.
func scriptedAgent(spec childSpec) AgentFunc {
	return func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		if err := appendLine(spec.Dir, "attempts.log", spec.Executor); err != nil {
			return nil, agentloop.Options{}, err
		}
		send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			turn := 0
			for _, m := range msgs {
				if m.Role == agentloop.RoleAssistant {
					turn++
				}
			}
			if err := appendLine(spec.Dir, "model.log", fmt.Sprintf("turn %d", turn+1)); err != nil {
				return agentloop.Response{}, err
			}
			if turn >= len(script)-1 {
				return agentloop.Response{Content: "done", StopReason: "stop"}, nil
			}
			var calls []llmtoolkit.Call
			for _, id := range script[turn] {
				calls = append(calls, llmtoolkit.Call{ID: id, Name: "append", Arguments: map[string]any{"line": id}})
			}
			return agentloop.Response{ToolCalls: calls, StopReason: "tool_calls"}, nil
		}
		name, props := "append", map[string]any{"line": map[string]any{"type": "string"}}
		switch spec.Agent {
		case "tools":
			name = "write"
		case "schema":
			props["mode"] = map[string]any{"type": "string"}
		}
		tool := llmtoolkit.MustTool(name, "appends a line", map[string]any{
			"type": "object", "properties": props, "required": []any{"line"},
		})
		resolve := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			if spec.Idempotent {
				done, err := readCounts(spec.Dir, "effects.log")
				if err != nil {
					return "", err
				}
				if done[call.ID] > 0 {
					return "already done", nil // the call ID is the idempotency key
				}
			}
			if err := appendLine(spec.Dir, "effects.log", call.ID); err != nil {
				return "", err
			}
			if spec.Checkpoints {
				if err := os.WriteFile(filepath.Join(spec.Dir, "tree", call.ID), []byte("written by "+call.ID+"\n"), 0o644); err != nil {
					return "", err
				}
			}
			if call.ID == spec.Block {
				if err := os.WriteFile(filepath.Join(spec.Dir, "blocked"), nil, 0o644); err != nil {
					return "", err
				}
				<-ctx.Done() // the parent kills the process here
				return "", ctx.Err()
			}
			return "appended " + call.ID, nil
		})
		var resolver llmtoolkit.Resolver = llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{tool})
		if spec.TraceDB != "" {
			db, err := trace.OpenSQLite(spec.TraceDB)
			if err != nil {
				return nil, agentloop.Options{}, err
			}
			if err := trace.Migrate(db); err != nil {
				return nil, agentloop.Options{}, err
			}
			resolver = trace.Record(resolver, db)
		}
		if spec.Checkpoints {
			c, err := checkpointer(spec)
			if err != nil {
				return nil, agentloop.Options{}, err
			}
			resolver = checkpoint.Resolver(resolver, c, checkpoint.WithRequired())
		}
		opts := agentloop.Options{Resolver: resolver, MaxParallel: 4}
		if spec.Agent == "options" {
			opts.MaxIterations = 7
		}
		return send, opts, nil
	}
}

// exitInUse is the exit code of a child refused at Launch with
// ErrExecutorInUse.
const exitInUse = 3

// childMain runs one child process and returns its exit code. It writes
// the run's result to result-EXECUTOR.json.
func childMain() int {
	var spec childSpec
	if err := json.Unmarshal([]byte(os.Getenv(childEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "child: bad spec:", err)
		return 2
	}
	if err := runChild(spec); err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		if errors.Is(err, ErrExecutorInUse) {
			return exitInUse
		}
		return 1
	}
	return 0
}

func runChild(spec childSpec) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	agent := scriptedAgent(spec)
	if spec.Context {
		agent = contextAgent(spec)
	}
	if spec.Agent == "jobs" {
		agent = jobsAgent(spec)
	}
	var eng *Engine
	if spec.Agent == "workspace" {
		agent = workspaceAgent(spec, &eng)
	}
	e, err := New(ctx, Config{DatabaseURL: spec.DB, ExecutorID: spec.Executor, ApplicationVersion: "crash-test", Agent: agent, Logger: quietLogger()})
	if err != nil {
		return err
	}
	e.plain = spec.Plain
	eng = e
	if err := e.Launch(); err != nil {
		return err
	}
	defer e.Shutdown(5 * time.Second)
	if spec.Start {
		if err := e.Start(ctx, spec.Run, Input{TenantID: testTenant, Messages: []agentloop.Message{agentloop.UserMessage("append four lines")}}); err != nil {
			return err
		}
	}
	if spec.Recover != "" {
		if spec.GoFile != "" {
			for {
				if _, err := os.Stat(spec.GoFile); err == nil {
					break
				}
				time.Sleep(5 * time.Millisecond)
			}
		}
		n, err := e.Recover(ctx, spec.Recover)
		if err != nil {
			return err
		}
		if err := appendLine(spec.Dir, "recovered.log", fmt.Sprintf("%s %d", spec.Executor, n)); err != nil {
			return err
		}
	}
	res, err := e.Result(ctx, spec.Run)
	if err != nil {
		b, _ := json.Marshal(childError{Message: err.Error(), AgentChanged: errors.Is(err, ErrAgentChanged),
			Nondeterminism: errors.Is(err, transact.ErrStepNondeterminism), Engine: errors.Is(err, ErrEngine)})
		return errors.Join(err, os.WriteFile(filepath.Join(spec.Dir, "error-"+spec.Executor+".json"), b, 0o644))
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(spec.Dir, "result-"+spec.Executor+".json"), b, 0o644)
}

// childError is what a child writes when the run's result is an error.
type childError struct {
	Message        string `json:"message"`
	AgentChanged   bool   `json:"agent_changed"`  // errors.Is(err, ErrAgentChanged)
	Nondeterminism bool   `json:"nondeterminism"` // errors.Is(err, transact.ErrStepNondeterminism)
	Engine         bool   `json:"engine"`         // errors.Is(err, ErrEngine)
}

// child is a running child process.
type child struct {
	cmd  *exec.Cmd
	out  *strings.Builder
	done chan error
}

func startChild(t *testing.T, spec childSpec) *child {
	t.Helper()
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+string(b))
	out := &strings.Builder{}
	w := &lockedWriter{b: out}
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	c := &child{cmd: cmd, out: out, done: make(chan error, 1)}
	go func() { c.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits for the child to exit by itself and fails on a non-zero exit.
func (c *child) wait(t *testing.T, timeout time.Duration) {
	t.Helper()
	select {
	case err := <-c.done:
		require.NoError(t, err, "child output:\n%s", c.output())
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("child did not finish within %v; output:\n%s", timeout, c.output())
	}
}

// exitCode waits for the child to exit by itself and returns its code.
func (c *child) exitCode(t *testing.T, timeout time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
		return c.cmd.ProcessState.ExitCode()
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("child did not finish within %v; output:\n%s", timeout, c.output())
		return -1
	}
}

// kill kills the child with SIGKILL and waits for it.
func (c *child) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, c.cmd.Process.Kill()) // SIGKILL on Unix
	<-c.done
}

func (c *child) output() string {
	return c.out.String()
}

type lockedWriter struct {
	mu sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *lockedWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// waitFile waits for path to exist, or fails.
func waitFile(t *testing.T, c *child, path string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		select {
		case err := <-c.done:
			c.done <- err
			t.Fatalf("the child exited (%v) before %s appeared; output:\n%s", err, path, c.output())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("%s did not appear within %v; output:\n%s", path, timeout, c.output())
}
