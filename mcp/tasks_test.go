package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// taskFixture is a resolver of tools for the task tests: wait blocks
// until its context ends (counting the ends it saw), quick answers at
// once, ask asks two questions, panics panics.
type taskFixture struct {
	*llmtoolkittest.Fake
	stopped atomic.Int64
	started chan struct{}
}

func newTaskFixture() *taskFixture {
	f := &taskFixture{Fake: llmtoolkittest.NewFake(nil), started: make(chan struct{}, 16)}
	obj := map[string]any{"type": "object"}
	f.Add(llmtoolkit.MustTool("wait", "Waits until cancelled.", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		f.started <- struct{}{}
		<-ctx.Done()
		f.stopped.Add(1)
		return "", ctx.Err()
	})
	f.Add(llmtoolkit.MustTool("quick", "Answers at once.", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		return "quick answer in task " + fmt.Sprint(TaskIDFrom(ctx) != ""), nil
	})
	f.Add(llmtoolkit.MustTool("hello", "Answers at once.", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		return "hello in task " + fmt.Sprint(TaskIDFrom(ctx) != ""), nil
	})
	f.Add(llmtoolkit.MustTool("ask", "Asks two questions.", obj), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		responses, state := InputFrom(ctx)
		if len(responses) == 2 && state == "asked" {
			a, _ := responses["a"].(*sdk.ElicitResult)
			b, _ := responses["b"].(*sdk.ElicitResult)
			return fmt.Sprintf("a=%v b=%v", a.Content["v"], b.Content["v"]), nil
		}
		ask := &sdk.ElicitParams{Message: "v?"}
		return "", InputRequired(sdk.InputRequestMap{"a": ask, "b": ask}, "asked")
	})
	f.Add(llmtoolkit.MustTool("panics", "Panics.", obj), func(context.Context, llmtoolkit.Call) (string, error) {
		panic("secret-value-in-panic")
	})
	return f
}

var taskSupport = map[string]TaskSupport{"wait": TaskOptional, "quick": TaskRequired, "ask": TaskOptional, "panics": TaskOptional, "hello": TaskOptional}

// taskClient posts raw JSON-RPC requests of the current protocol.
type taskClient struct {
	url     string
	declare bool   // declare the tasks extension
	token   string // a bearer token, or none
	trace   string // a traceparent for the _meta, or none
}

type rpcAnswer struct {
	Status int
	Result map[string]any
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	}
}

func (c taskClient) do(t testing.TB, method string, params map[string]any, headers map[string]string) rpcAnswer {
	t.Helper()
	caps := map[string]any{}
	if c.declare {
		caps["extensions"] = map[string]any{TasksExtension: map[string]any{}}
	}
	params["_meta"] = map[string]any{
		sdk.MetaKeyProtocolVersion:           CurrentProtocolVersion,
		"io.modelcontextprotocol/clientInfo": map[string]any{"name": "t", "version": "1"},
		sdk.MetaKeyClientCapabilities:        caps,
	}
	if c.trace != "" {
		params["_meta"].(map[string]any)["traceparent"] = c.trace
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, c.url, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", CurrentProtocolVersion)
	req.Header.Set("Mcp-Method", method)
	if n, ok := params["name"].(string); ok {
		req.Header.Set("Mcp-Name", n)
	}
	if id, ok := params["taskId"].(string); ok {
		req.Header.Set("Mcp-Name", id)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
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
	a := rpcAnswer{Status: resp.StatusCode}
	require.NoError(t, json.Unmarshal(data, &a), "answer: %s", data)
	return a
}

// await polls tasks/get until the task leaves status working.
func (c taskClient) await(t testing.TB, id string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		a := c.do(t, "tasks/get", map[string]any{"taskId": id}, nil)
		require.Nil(t, a.Error)
		if a.Result["status"] != string(TaskWorking) {
			return a.Result
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("task %s still working after %v", id, testTimeout)
	return nil
}

func taskServerURL(t testing.TB, r llmtoolkit.Resolver, opts ...Option) string {
	t.Helper()
	srv := httptest.NewServer(Handler(r, append([]Option{WithTaskTools(taskSupport)}, opts...)...))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestTaskCreation: which calls become tasks, by the tool's TaskSupport and
// the client's declaration.
func TestTaskCreation(t *testing.T) {
	url := taskServerURL(t, newTaskFixture())
	tests := []struct {
		name    string
		tool    string
		declare bool
		want    string // "task", "complete", or an error code
	}{
		{"optional, declared: a task", "ask", true, "task"},
		{"optional, not declared: synchronous", "ask", false, "input_required"},
		{"required, declared: a task", "quick", true, "task"},
		{"required, not declared: -32021", "quick", false, "-32021"},
		{"never: synchronous", "echo-absent", true, "-32602"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := taskClient{url: url, declare: tt.declare}.do(t, "tools/call", map[string]any{"name": tt.tool, "arguments": map[string]any{}}, nil)
			if strings.HasPrefix(tt.want, "-") {
				require.NotNil(t, a.Error, "result: %v", a.Result)
				assert.Equal(t, tt.want, fmt.Sprint(a.Error.Code))
				if tt.want == "-32021" {
					assert.Contains(t, string(a.Error.Data), TasksExtension)
				}
				return
			}
			require.Nil(t, a.Error)
			assert.Equal(t, tt.want, a.Result["resultType"])
			if tt.want == "task" {
				assert.NotEmpty(t, a.Result["taskId"])
				assert.Equal(t, "working", a.Result["status"])
				assert.NotContains(t, a.Result, "result")
				assert.NotContains(t, a.Result, "requestState")
				assert.EqualValues(t, DefaultTaskTTL.Milliseconds(), a.Result["ttlMs"])
			} else {
				assert.NotContains(t, a.Result, "taskId")
			}
		})
	}
}

// TestTaskLifecycle: a task completes with its result inlined; a panic
// fails it without its value; a cancel stops its tool (its context ends)
// and is idempotent; an unknown task is -32602.
func TestTaskLifecycle(t *testing.T) {
	f := newTaskFixture()
	c := taskClient{url: taskServerURL(t, f), declare: true}
	call := func(tool string) string {
		a := c.do(t, "tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, nil)
		require.Nil(t, a.Error)
		id, _ := a.Result["taskId"].(string)
		require.NotEmpty(t, id)
		return id
	}

	done := c.await(t, call("quick"))
	assert.Equal(t, "completed", done["status"])
	assert.Equal(t, "complete", done["resultType"])
	assert.Contains(t, fmt.Sprint(done["result"]), "quick answer in task true")

	failed := c.await(t, call("panics"))
	assert.Equal(t, "failed", failed["status"])
	assert.NotContains(t, failed, "result")
	assert.NotContains(t, fmt.Sprint(failed["error"]), "secret-value-in-panic")

	id := call("wait")
	<-f.started
	for range 2 { // the second cancel of a terminal task is the same ack
		ack := c.do(t, "tasks/cancel", map[string]any{"taskId": id}, nil)
		require.Nil(t, ack.Error)
		assert.Equal(t, map[string]any{"resultType": "complete"}, withoutMeta(ack.Result))
	}
	assert.Equal(t, "cancelled", c.await(t, id)["status"])
	require.Eventually(t, func() bool { return f.stopped.Load() == 1 }, testTimeout, 10*time.Millisecond, "the tool's context ended")

	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		a := c.do(t, m, map[string]any{"taskId": "no-such-task"}, nil)
		require.NotNil(t, a.Error, m)
		assert.EqualValues(t, -32602, a.Error.Code, m)
	}
}

func withoutMeta(m map[string]any) map[string]any {
	delete(m, "_meta")
	return m
}

// TestTaskRequestChecks: tasks/* need the extension declared (-32021) and
// routing headers that match the body (400, -32020).
func TestTaskRequestChecks(t *testing.T) {
	url := taskServerURL(t, newTaskFixture())
	c := taskClient{url: url, declare: true}
	a := c.do(t, "tools/call", map[string]any{"name": "quick", "arguments": map[string]any{}}, nil)
	id, _ := a.Result["taskId"].(string)
	require.NotEmpty(t, id)
	tests := []struct {
		name    string
		declare bool
		headers map[string]string
		status  int
		code    int64
	}{
		{"not declared", false, nil, http.StatusOK, -32021},
		{"Mcp-Name of another task", true, map[string]string{"Mcp-Name": "other"}, http.StatusBadRequest, -32020},
		{"Mcp-Method of another method", true, map[string]string{"Mcp-Method": "tasks/cancel"}, http.StatusBadRequest, -32020},
		{"Mcp-Name with whitespace", true, map[string]string{"Mcp-Name": "  " + id + " "}, http.StatusOK, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := taskClient{url: url, declare: tt.declare}.do(t, "tasks/get", map[string]any{"taskId": id}, tt.headers)
			assert.Equal(t, tt.status, a.Status)
			if tt.code == 0 {
				require.Nil(t, a.Error)
				assert.Equal(t, id, a.Result["taskId"])
				return
			}
			require.NotNil(t, a.Error)
			assert.Equal(t, tt.code, a.Error.Code)
		})
	}
}

// TestTaskInputRequired: a task whose tool asks for input is
// input_required with the requests; answers may come one at a time; the
// tool runs again with all of them and its state.
func TestTaskInputRequired(t *testing.T) {
	c := taskClient{url: taskServerURL(t, newTaskFixture()), declare: true}
	a := c.do(t, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{}}, nil)
	id, _ := a.Result["taskId"].(string)
	require.NotEmpty(t, id)
	got := c.await(t, id)
	require.Equal(t, "input_required", got["status"])
	reqs, _ := got["inputRequests"].(map[string]any)
	require.Len(t, reqs, 2)
	assert.Contains(t, fmt.Sprint(reqs["a"]), "elicitation/create")

	update := func(key string, v int) {
		ack := c.do(t, "tasks/update", map[string]any{"taskId": id, "inputResponses": map[string]any{
			key: map[string]any{"action": "accept", "content": map[string]any{"v": v}}, "unasked": map[string]any{"x": 1}}}, nil)
		require.Nil(t, ack.Error)
		assert.Equal(t, "complete", ack.Result["resultType"])
	}
	update("a", 1)
	got = c.do(t, "tasks/get", map[string]any{"taskId": id}, nil).Result
	assert.Equal(t, "input_required", got["status"])
	assert.Equal(t, []string{"b"}, keys(got["inputRequests"]))
	update("b", 2)
	got = c.await(t, id)
	assert.Equal(t, "completed", got["status"])
	assert.Contains(t, fmt.Sprint(got["result"]), "a=1 b=2")
}

func keys(v any) []string {
	m, _ := v.(map[string]any)
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestSyncFallThroughWithSDKClient: the official SDK's client, which
// declares no tasks extension, calls a tool of TaskOptional support and
// gets its answer synchronously, as from any server.
func TestSyncFallThroughWithSDKClient(t *testing.T) {
	url := taskServerURL(t, newTaskFixture())
	for _, version := range []string{CurrentProtocolVersion, "2025-11-25"} {
		t.Run(version, func(t *testing.T) {
			cs := sdkSession(t, url, version, nil)
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "hello", Arguments: map[string]any{}})
			require.NoError(t, err)
			require.Len(t, res.Content, 1)
			assert.Equal(t, "hello in task false", res.Content[0].(*sdk.TextContent).Text)
		})
	}
}

// TestTaskOwner: under WithBearerAuth a task is its caller's: another
// tenant's token finds no such task, and the task runs with its caller's
// tools only.
func TestTaskOwner(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	s := newAuthServer(t, db, WithTaskTools(map[string]TaskSupport{"peek": TaskRequired, "poke": TaskRequired}))
	tenantA, tenantB := uuid.NewString(), uuid.NewString()
	s.migrate(t, tenantA)
	s.migrate(t, tenantB)
	a := taskClient{url: s.url, declare: true, token: s.is.sign(t, s.is.claims(tenantA, uuid.NewString(), scopeTools))}
	b := taskClient{url: s.url, declare: true, token: s.is.sign(t, s.is.claims(tenantB, uuid.NewString(), scopeTools))}

	created := a.do(t, "tools/call", map[string]any{"name": "peek", "arguments": map[string]any{}}, nil)
	require.Nil(t, created.Error)
	id, _ := created.Result["taskId"].(string)
	assert.Equal(t, "completed", a.await(t, id)["status"])
	other := b.do(t, "tasks/get", map[string]any{"taskId": id}, nil)
	require.NotNil(t, other.Error)
	assert.EqualValues(t, -32602, other.Error.Code)

	poke := a.do(t, "tools/call", map[string]any{"name": "poke", "arguments": map[string]any{}}, nil)
	require.Nil(t, poke.Error)
	if pid, ok := poke.Result["taskId"].(string); ok {
		got := a.await(t, pid)
		assert.Contains(t, fmt.Sprint(got["result"]), "not available")
	} else {
		assert.Equal(t, true, poke.Result["isError"])
	}
	assert.Empty(t, s.fake.CallsTo("poke"))
}

// TestMemoryTaskStoreBounds: the cap evicts the oldest finished task and
// refuses when every task is live; the TTL forgets a task and cancels
// its run.
func TestMemoryTaskStoreBounds(t *testing.T) {
	ctx := testContext(t)
	now := time.Unix(1_000_000, 0)
	s := NewMemoryTaskStore(2, 0)
	s.now = func() time.Time { return now }
	ran := make(chan context.Context, 1)
	s.Bind(func(ctx context.Context, _ string, _ int) error { ran <- ctx; <-ctx.Done(); return nil })
	task := func(id string, status TaskStatus) *Task {
		return &Task{ID: id, Status: status, CreatedAt: now, TTL: time.Minute}
	}
	require.NoError(t, s.Create(ctx, task("done", TaskCompleted)))
	require.NoError(t, s.Create(ctx, task("live", TaskWorking)))
	require.NoError(t, s.Create(ctx, task("third", TaskWorking)), "the finished task makes room")
	_, err := s.Get(ctx, "done")
	assert.ErrorIs(t, err, ErrTaskNotFound)
	assert.ErrorIs(t, s.Create(ctx, task("fourth", TaskWorking)), ErrTaskStoreFull)

	require.NoError(t, s.Run(ctx, "live", 0))
	runCtx := <-ran
	now = now.Add(2 * time.Minute)
	_, err = s.Get(ctx, "live")
	assert.ErrorIs(t, err, ErrTaskNotFound)
	select {
	case <-runCtx.Done():
	case <-time.After(testTimeout):
		t.Fatal("the run of a forgotten task was not cancelled")
	}
	_, err = s.Update(ctx, "live", func(*Task) error { return errors.New("not called") })
	assert.ErrorIs(t, err, ErrTaskNotFound)
}

// TestMemoryTaskStoreBytes: the bytes cap forgets finished tasks to make
// room, refuses a task that does not fit beside live ones, and fails a
// task whose result does not fit rather than keep it.
func TestMemoryTaskStoreBytes(t *testing.T) {
	ctx := testContext(t)
	s := NewMemoryTaskStore(100, 4096)
	big := json.RawMessage(`"` + strings.Repeat("x", 1500) + `"`)
	task := func(id string, status TaskStatus) *Task {
		return &Task{ID: id, Status: status, CreatedAt: time.Now(), TTL: time.Hour, Result: big}
	}
	require.NoError(t, s.Create(ctx, task("old", TaskCompleted)))
	require.NoError(t, s.Create(ctx, task("live1", TaskWorking)))
	require.NoError(t, s.Create(ctx, task("live2", TaskWorking)), "the finished task makes room")
	_, err := s.Get(ctx, "old")
	assert.ErrorIs(t, err, ErrTaskNotFound)
	assert.ErrorIs(t, s.Create(ctx, task("live3", TaskWorking)), ErrTaskStoreFull)

	got, err := s.Update(ctx, "live1", func(t *Task) error {
		t.Status, t.Result = TaskCompleted, json.RawMessage(`"`+strings.Repeat("y", 3000)+`"`)
		return nil
	})
	require.NoError(t, err)
	assert.Equal(t, TaskFailed, got.Status)
	assert.Empty(t, got.Result)
	assert.Contains(t, got.Error.Message, "does not fit")
	assert.LessOrEqual(t, s.bytes, s.maxBytes)
}

// TestShutdownCancelsOwnTasks: the runs of the handler's default store
// end with its Shutdown: no goroutine of a task outlives the handler.
func TestShutdownCancelsOwnTasks(t *testing.T) {
	f := newTaskFixture()
	h := Handler(f, WithTaskTools(taskSupport))
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := taskClient{url: srv.URL, declare: true}
	a := c.do(t, "tools/call", map[string]any{"name": "wait", "arguments": map[string]any{}}, nil)
	require.Nil(t, a.Error)
	<-f.started
	require.NoError(t, h.Shutdown(testContext(t)))
	require.Eventually(t, func() bool { return f.stopped.Load() == 1 }, testTimeout, 10*time.Millisecond)
}

// TestClientFollowsTasks: Connect with WithClientTasks declares the
// extension and follows the server's tasks to their result; without it a
// tool that requires tasks is refused (-32021). A call whose context ends
// cancels its task (the tool stops); a task that asks for input is
// cancelled and the call fails.
func TestClientFollowsTasks(t *testing.T) {
	f := newTaskFixture()
	url := taskServerURL(t, f)
	ctx := testContext(t)

	plain, err := Connect(ctx, HTTPTransport(url, nil))
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Resolve(ctx, llmtoolkit.Call{Name: "quick", Arguments: map[string]any{}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), TasksExtension)

	c, err := Connect(ctx, HTTPTransport(url, nil), WithClientTasks())
	require.NoError(t, err)
	defer c.Close()
	tests := []struct {
		tool    string
		want    string
		wantErr string
	}{
		{"quick", "quick answer in task true", ""},
		{"hello", "hello in task true", ""},
		{"ask", "", "asked for input"},
		{"panics", "", "panicked"},
	}
	for _, tt := range tests {
		t.Run(tt.tool, func(t *testing.T) {
			out, err := c.Resolve(ctx, llmtoolkit.Call{Name: tt.tool, Arguments: map[string]any{}})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}

	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = c.Resolve(short, llmtoolkit.Call{Name: "wait", Arguments: map[string]any{}})
	require.Error(t, err)
	require.Eventually(t, func() bool { return f.stopped.Load() == 1 }, testTimeout, 10*time.Millisecond, "the task was cancelled")
}

// TestTasksOnLegacySession: a client of 2025-11-25 that declared the
// extension at initialize gets tasks in its session, and its tasks/get
// (with no _meta) is answered by the session's declaration.
func TestTasksOnLegacySession(t *testing.T) {
	url := taskServerURL(t, newTaskFixture())
	post := func(session string, msg map[string]any) (*http.Response, map[string]any) {
		body, err := json.Marshal(msg)
		require.NoError(t, err)
		req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		if i := bytes.LastIndex(data, []byte("data: ")); i >= 0 {
			data = data[i+len("data: "):]
		}
		var out map[string]any
		if len(bytes.TrimSpace(data)) > 0 {
			require.NoError(t, json.Unmarshal(data, &out), "%s", data)
		}
		return resp, out
	}
	resp, _ := post("", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-11-25", "clientInfo": map[string]any{"name": "legacy", "version": "1"},
		"capabilities": map[string]any{"extensions": map[string]any{TasksExtension: map[string]any{}}}}})
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	post(session, map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	_, created := post(session, map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "quick", "arguments": map[string]any{}}})
	result, _ := created["result"].(map[string]any)
	id, _ := result["taskId"].(string)
	require.NotEmpty(t, id, "answer: %v", created)
	require.Eventually(t, func() bool {
		_, got := post(session, map[string]any{"jsonrpc": "2.0", "id": 3, "method": "tasks/get", "params": map[string]any{"taskId": id}})
		r, _ := got["result"].(map[string]any)
		return r["status"] == "completed"
	}, testTimeout, 20*time.Millisecond)
}

// TestTaskRunsInCallersTrace: a task's run carries the trace context of
// the call that created it (WithPropagator), though it runs after the
// request is over.
func TestTaskRunsInCallersTrace(t *testing.T) {
	f := newTaskFixture()
	got := make(chan any, 1)
	f.Handle("quick", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		got <- ctx.Value(traceKey{})
		return "ok", nil
	})
	c := taskClient{url: taskServerURL(t, f, WithPropagator(&fakePropagator{})), declare: true, trace: "00-trace-of-the-caller-01"}
	a := c.do(t, "tools/call", map[string]any{"name": "quick", "arguments": map[string]any{}}, nil)
	require.Nil(t, a.Error)
	require.Equal(t, "task", a.Result["resultType"])
	select {
	case v := <-got:
		assert.Equal(t, "00-trace-of-the-caller-01", v)
	case <-time.After(testTimeout):
		t.Fatal("the task did not run")
	}
}
