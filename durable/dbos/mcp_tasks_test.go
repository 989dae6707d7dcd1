package dbos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// replicaEnv makes the test binary an MCP server replica (replicaMain).
const replicaEnv = "LLMTOOLKIT_DBOS_MCP_REPLICA"

// replicaSpec is what a replica serves, passed in its environment.
type replicaSpec struct {
	DB       string `json:"db"`       // the system database URL
	Executor string `json:"executor"` // its executor ID
	Root     string `json:"root"`     // codetools' folder
	AddrFile string `json:"addr"`     // where it writes its URL once it serves
}

// replicaMain serves codetools' bash as a tool whose calls always run as
// MCP tasks, on a durable TaskStore, until the process is killed.
func replicaMain() int {
	var spec replicaSpec
	if err := json.Unmarshal([]byte(os.Getenv(replicaEnv)), &spec); err != nil {
		fmt.Fprintln(os.Stderr, "replica spec:", err)
		return 2
	}
	if err := serveReplica(spec); err != nil {
		fmt.Fprintln(os.Stderr, "replica:", err)
		return 1
	}
	return 0
}

func serveReplica(spec replicaSpec) error {
	ctx := context.Background()
	store, err := NewTaskStore(ctx, TaskStoreConfig{DatabaseURL: spec.DB, ExecutorID: spec.Executor,
		ApplicationVersion: "mcp-tasks-test", Logger: quietLogger()})
	if err != nil {
		return err
	}
	code, err := codetools.New(spec.Root)
	if err != nil {
		return err
	}
	h := mcp.Handler(code, mcp.WithTaskTools(map[string]mcp.TaskSupport{"bash": mcp.TaskRequired}),
		mcp.WithTaskStore(store), mcp.WithLogger(quietLogger()))
	if err := store.Launch(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	tmp := spec.AddrFile + ".tmp"
	if err := os.WriteFile(tmp, []byte("http://"+ln.Addr().String()+"/mcp"), 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, spec.AddrFile); err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	return srv.Serve(ln)
}

// replica is a replica process.
type replica struct {
	cmd  *exec.Cmd
	url  string
	out  *lockedWriter
	done chan error
}

// startReplica starts a replica process (in a process group of its own,
// so that killing it kills its bash too) and waits for its URL.
func startReplica(t *testing.T, spec replicaSpec) *replica {
	t.Helper()
	_ = os.Remove(spec.AddrFile)
	b, err := json.Marshal(spec)
	require.NoError(t, err)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(b))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	w := &lockedWriter{b: &strings.Builder{}}
	cmd.Stdout, cmd.Stderr = w, w
	require.NoError(t, cmd.Start())
	r := &replica{cmd: cmd, out: w, done: make(chan error, 1)}
	go func() { r.done <- cmd.Wait() }()
	t.Cleanup(func() { r.kill() })
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if data, err := os.ReadFile(spec.AddrFile); err == nil {
			r.url = string(data)
			return r
		}
		select {
		case err := <-r.done:
			r.done <- err
			t.Fatalf("replica %s exited before serving: %v\n%s", spec.Executor, err, w.String())
		case <-time.After(50 * time.Millisecond):
		}
	}
	t.Fatalf("replica %s did not serve within 60 s:\n%s", spec.Executor, w.String())
	return nil
}

// kill SIGKILLs the replica's process group and waits for it. It reads
// nothing Wait writes (ProcessState is Wait's, in another goroutine): a
// second kill finds the group gone and the result still in done.
func (r *replica) kill() {
	_ = syscall.Kill(-r.cmd.Process.Pid, syscall.SIGKILL)
	err := <-r.done
	r.done <- err
}

// rpc sends one JSON-RPC request of the current protocol, declaring the
// tasks extension, and returns its result or its error.
func rpc(t *testing.T, url, method string, params map[string]any) (map[string]any, map[string]any) {
	t.Helper()
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    mcp.CurrentProtocolVersion,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "dbos-test", "version": "1"},
		"io.modelcontextprotocol/clientCapabilities": map[string]any{"extensions": map[string]any{mcp.TasksExtension: map[string]any{}}},
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", mcp.CurrentProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	if name, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", name)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		for _, line := range strings.Split(string(data), "\n") {
			if rest, ok := strings.CutPrefix(line, "data:"); ok && strings.Contains(rest, `"id"`) {
				data = []byte(rest)
			}
		}
	}
	var out struct {
		Result map[string]any `json:"result"`
		Error  map[string]any `json:"error"`
	}
	require.NoError(t, json.Unmarshal(data, &out), "answer: %s", data)
	return out.Result, out.Error
}

// TestTaskSurvivesReplicaRestart: a task running bash's sleep is created
// on replica 1 (a process), which is SIGKILLed mid-sleep and started
// again with its executor ID; replica 2, which never ran the task, reads
// its status throughout and its result at the end. Without a durable
// store the task would stay "working" forever (no one runs it again).
// The sleep is 30 s under LLMTOOLKIT_STRESS=1, 3 s otherwise.
func TestTaskSurvivesReplicaRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	sleep := 3
	if os.Getenv("LLMTOOLKIT_STRESS") == "1" {
		sleep = 30
	}
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			root := filepath.Join(dir, "work")
			require.NoError(t, os.Mkdir(root, 0o700))
			spec := func(executor string) replicaSpec {
				return replicaSpec{DB: db(t), Executor: executor, Root: root, AddrFile: filepath.Join(dir, executor+".addr")}
			}
			s1 := spec("replica-1")
			s2 := s1
			s2.Executor, s2.AddrFile = "replica-2", filepath.Join(dir, "replica-2.addr")
			r1 := startReplica(t, s1)
			r2 := startReplica(t, s2)

			created, rpcErr := rpc(t, r1.url, "tools/call", map[string]any{"name": "bash",
				"arguments": map[string]any{"command": fmt.Sprintf("sleep %d && echo slept-%d", sleep, sleep), "timeout": 120}})
			require.Nil(t, rpcErr)
			require.Equal(t, "task", created["resultType"], "answer: %v", created)
			id, _ := created["taskId"].(string)
			require.NotEmpty(t, id)

			time.Sleep(time.Second) // bash sleeps on replica 1
			got, rpcErr := rpc(t, r2.url, "tasks/get", map[string]any{"taskId": id})
			require.Nil(t, rpcErr)
			assert.Equal(t, "working", got["status"], "replica 2 reads the task replica 1 runs")

			start := time.Now()
			r1.kill()
			got, rpcErr = rpc(t, r2.url, "tasks/get", map[string]any{"taskId": id})
			require.Nil(t, rpcErr)
			assert.Equal(t, "working", got["status"], "replica 1 died mid-sleep: the task is not over")
			startReplica(t, s1) // restarted: it runs the round again

			deadline := time.Now().Add(time.Duration(sleep)*time.Second + 90*time.Second)
			for got["status"] == "working" && time.Now().Before(deadline) {
				time.Sleep(500 * time.Millisecond)
				got, rpcErr = rpc(t, r2.url, "tasks/get", map[string]any{"taskId": id})
				require.Nil(t, rpcErr)
			}
			t.Logf("%s: the task was %v %v after replica 1 was killed (sleep %d s)", name, got["status"], time.Since(start).Round(time.Millisecond), sleep)
			require.Equal(t, "completed", got["status"], "task: %v", got)
			result, _ := got["result"].(map[string]any)
			text, _ := json.Marshal(result["content"])
			assert.Contains(t, string(text), fmt.Sprintf("slept-%d", sleep))
			assert.NotEqual(t, true, result["isError"])
		})
	}
}

// TestTaskStoreCancelAcrossReplicas: a task cancelled through replica 2
// stops on replica 1 (its bash is killed), and stays cancelled.
func TestTaskStoreCancelAcrossReplicas(t *testing.T) {
	if testing.Short() {
		t.Skip("starts replica processes")
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "dbos.db")
	dir := t.TempDir()
	root := filepath.Join(dir, "work")
	require.NoError(t, os.Mkdir(root, 0o700))
	r1 := startReplica(t, replicaSpec{DB: db, Executor: "replica-1", Root: root, AddrFile: filepath.Join(dir, "1.addr")})
	r2 := startReplica(t, replicaSpec{DB: db, Executor: "replica-2", Root: root, AddrFile: filepath.Join(dir, "2.addr")})
	marker := filepath.Join(root, "finished")
	created, rpcErr := rpc(t, r1.url, "tools/call", map[string]any{"name": "bash",
		"arguments": map[string]any{"command": "sleep 4 && touch finished"}})
	require.Nil(t, rpcErr)
	id, _ := created["taskId"].(string)
	require.NotEmpty(t, id)
	ack, rpcErr := rpc(t, r2.url, "tasks/cancel", map[string]any{"taskId": id})
	require.Nil(t, rpcErr)
	assert.Equal(t, "complete", ack["resultType"])
	time.Sleep(6 * time.Second)
	got, rpcErr := rpc(t, r1.url, "tasks/get", map[string]any{"taskId": id})
	require.Nil(t, rpcErr)
	assert.Equal(t, "cancelled", got["status"])
	_, err := os.Stat(marker)
	assert.True(t, errors.Is(err, os.ErrNotExist), "the cancelled bash was stopped before it finished")
}

// TestTaskStoreUpdateIsAtomic: concurrent Updates of one task, as from
// several replicas, lose no write; an unknown or expired task is
// mcp.ErrTaskNotFound.
func TestTaskStoreUpdateIsAtomic(t *testing.T) {
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			stores := make([]*TaskStore, 2)
			url := db(t)
			for i := range stores {
				s, err := NewTaskStore(ctx, TaskStoreConfig{DatabaseURL: url, ExecutorID: fmt.Sprintf("u%d", i), Logger: quietLogger()})
				require.NoError(t, err)
				t.Cleanup(func() { _ = s.Shutdown(5 * time.Second) })
				stores[i] = s
			}
			now := time.Now().UTC()
			require.NoError(t, stores[0].Create(ctx, &mcp.Task{ID: "counter", Status: mcp.TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: time.Hour}))
			require.NoError(t, stores[0].Create(ctx, &mcp.Task{ID: "expired", Status: mcp.TaskWorking, CreatedAt: now.Add(-2 * time.Hour), TTL: time.Hour}))
			const n = 20
			errs := make(chan error, 2*n)
			for _, s := range stores {
				go func() {
					for range n {
						_, err := s.Update(ctx, "counter", func(t *mcp.Task) error { t.Round++; return nil })
						errs <- err
					}
				}()
			}
			for range 2 * n {
				require.NoError(t, <-errs)
			}
			got, err := stores[1].Get(ctx, "counter")
			require.NoError(t, err)
			assert.Equal(t, 2*n, got.Round)
			for _, id := range []string{"expired", "never"} {
				_, err = stores[1].Get(ctx, id)
				assert.ErrorIs(t, err, mcp.ErrTaskNotFound, id)
			}
		})
	}
}
