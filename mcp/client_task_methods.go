package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
)

// ErrClientTasksOff is returned by the task methods of [Client]
// ([Client.StartTask], [Client.GetTask], [Client.PollTask],
// [Client.CancelTask]) of a client that was not connected over
// [HTTPTransport] with [WithClientTasks].
var ErrClientTasksOff = errors.New("mcp: the task methods need Connect over HTTPTransport with WithClientTasks")

// TaskState is a task as the server reports it: the answer of tasks/get
// (or of the tools/call that created the task).
type TaskState struct {
	// ID is the task's ID (taskId): what GetTask, PollTask and CancelTask
	// take. Empty for a call the server answered at once, without a task.
	ID string
	// Status is where the task is; Completed, Failed and Cancelled are
	// terminal ([TaskStatus.Terminal]).
	Status TaskStatus
	// StatusMessage says more about the status, when the server says more.
	StatusMessage string
	// CreatedAt and UpdatedAt are the task's creation and last change, as
	// the server reports them (zero when it does not).
	CreatedAt, UpdatedAt time.Time
	// TTL is how long the server keeps the task after its creation.
	TTL time.Duration
	// PollInterval is how often the server asks to be polled (0: it does
	// not say; [Client.PollTask] then polls every second).
	PollInterval time.Duration
	// InputRequests are the server's unanswered input requests, by ID
	// (each the JSON of {"method", "params"}), while the status is
	// input_required.
	InputRequests map[string]json.RawMessage
	// Result is the tool's result once the status is completed; its
	// IsError says that the tool itself failed.
	Result *sdk.CallToolResult
	// Error is the protocol error of a failed task.
	Error *TaskError
}

// taskRPC sends the requests of the tasks extension for a [Client]: over
// the HTTP client the session's transport uses (its authorization and
// answer bound included), with the headers and _meta of the session's
// protocol version.
type taskRPC struct {
	endpoint string
	next     http.RoundTripper
	session  *sdk.ClientSession
	impl     *sdk.Implementation
	maxBytes int64
	ext      string // the extension the requests are of: TasksExtension when ""
}

// StartTask calls a tool of the server without waiting for it: when the
// server runs the call as a task, the answer is the task's first state
// (its ID, status working, poll interval), to follow with
// [Client.PollTask] or [Client.GetTask] and to stop with
// [Client.CancelTask]. When the server answers at once instead (the tool
// does not support tasks), the state has no ID, status completed and the
// result. call.Name must be a tool the server listed; the call's ID
// travels as with [Client.Resolve]. A server asking for input before it
// created a task is an error: such calls are for [Client.Resolve].
func (c *Client) StartTask(ctx context.Context, call llmtoolkit.Call) (*TaskState, error) {
	if c.tasks == nil {
		return nil, ErrClientTasksOff
	}
	if _, ok := c.LookupTool(call.Name); !ok {
		return nil, fmt.Errorf("%w: %s (not listed by MCP server %q)", llmtoolkit.ErrUnknownTool, call.Name, c.server)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	params := map[string]any{"name": call.Name, "arguments": args}
	var meta map[string]any
	if call.ID != "" {
		meta = map[string]any{CallIDMetaKey: llmtoolkit.IdempotencyKey(ctx, call)}
	}
	raw, err := c.tasks.send(ctx, "tools/call", call.Name, params, meta)
	if err != nil {
		return nil, fmt.Errorf("mcp: starting tool %q as a task on MCP server %q: %w", call.Name, c.server, err)
	}
	var head struct {
		ResultType string `json:"resultType"`
	}
	_ = json.Unmarshal(raw, &head)
	switch head.ResultType {
	case "task":
		st, err := decodeTaskState(raw)
		if err != nil {
			return nil, fmt.Errorf("mcp: the task MCP server %q created for tool %q: %w", c.server, call.Name, err)
		}
		return st, nil
	case "", "complete":
		var res sdk.CallToolResult
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("mcp: the answer of MCP server %q to tool %q: %w", c.server, call.Name, err)
		}
		return &TaskState{Status: TaskCompleted, Result: &res}, nil
	default:
		return nil, fmt.Errorf("mcp: MCP server %q answered tool %q with %q before creating a task: call it with Resolve", c.server, call.Name, head.ResultType)
	}
}

// GetTask asks the server where task id is (tasks/get), once. An ID the
// server does not hold for this client (never created, expired, or
// another owner's) is an error wrapping [ErrTaskNotFound].
func (c *Client) GetTask(ctx context.Context, id string) (*TaskState, error) {
	if c.tasks == nil {
		return nil, ErrClientTasksOff
	}
	if id == "" {
		return nil, errors.New("mcp: GetTask needs a task ID (TaskState.ID)")
	}
	raw, err := c.tasks.send(ctx, methodTasksGet, id, map[string]any{"taskId": id}, nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: tasks/get of task %s on MCP server %q: %w", id, c.server, err)
	}
	st, err := decodeTaskState(raw)
	if err != nil {
		return nil, fmt.Errorf("mcp: tasks/get of task %s on MCP server %q: %w", id, c.server, err)
	}
	return st, nil
}

// PollTask polls task id with tasks/get, at the interval the server asks
// for (between 100 ms and 5 s; every second when it does not say), until
// the task is terminal or asks for input (input_required), and returns
// that state. When ctx ends first it returns ctx's error and leaves the
// task running: to stop it, call [Client.CancelTask].
func (c *Client) PollTask(ctx context.Context, id string) (*TaskState, error) {
	for {
		st, err := c.GetTask(ctx, id)
		if err != nil {
			return nil, err
		}
		if st.Status.Terminal() || st.Status == TaskInputRequired {
			return st, nil
		}
		every := st.PollInterval
		if every <= 0 {
			every = time.Second
		}
		timer := time.NewTimer(min(max(every, 100*time.Millisecond), 5*time.Second))
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, fmt.Errorf("mcp: polling task %s on MCP server %q: %w", id, c.server, ctx.Err())
		case <-timer.C:
		}
	}
}

// CancelTask asks the server to cancel task id (tasks/cancel) and returns
// the task's state after it. The extension's answer to tasks/cancel is an
// empty acknowledgement (the cancelled status is observed through the
// next tasks/get), so CancelTask reads the state with tasks/get: status
// cancelled, or the terminal status the task had reached before (a
// cancel of an ended task changes nothing, as the extension says).
func (c *Client) CancelTask(ctx context.Context, id string) (*TaskState, error) {
	if c.tasks == nil {
		return nil, ErrClientTasksOff
	}
	if id == "" {
		return nil, errors.New("mcp: CancelTask needs a task ID (TaskState.ID)")
	}
	if _, err := c.tasks.send(ctx, methodTasksCancel, id, map[string]any{"taskId": id}, nil); err != nil {
		return nil, fmt.Errorf("mcp: tasks/cancel of task %s on MCP server %q: %w", id, c.server, err)
	}
	return c.GetTask(ctx, id)
}

// decodeTaskState reads a task's wire form.
func decodeTaskState(raw json.RawMessage) (*TaskState, error) {
	var w struct {
		TaskID         string                     `json:"taskId"`
		Status         TaskStatus                 `json:"status"`
		StatusMessage  string                     `json:"statusMessage"`
		CreatedAt      string                     `json:"createdAt"`
		LastUpdatedAt  string                     `json:"lastUpdatedAt"`
		TTLMs          int64                      `json:"ttlMs"`
		PollIntervalMs int64                      `json:"pollIntervalMs"`
		InputRequests  map[string]json.RawMessage `json:"inputRequests"`
		Result         json.RawMessage            `json:"result"`
		Error          *TaskError                 `json:"error"`
	}
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("decoding the task: %w", err)
	}
	if w.TaskID == "" || w.Status == "" {
		return nil, fmt.Errorf("the answer is not a task (no taskId or status): %.200s", raw)
	}
	st := &TaskState{ID: w.TaskID, Status: w.Status, StatusMessage: w.StatusMessage,
		TTL: time.Duration(w.TTLMs) * time.Millisecond, PollInterval: time.Duration(w.PollIntervalMs) * time.Millisecond,
		InputRequests: w.InputRequests, Error: w.Error}
	st.CreatedAt, _ = time.Parse(time.RFC3339Nano, w.CreatedAt)
	st.UpdatedAt, _ = time.Parse(time.RFC3339Nano, w.LastUpdatedAt)
	if len(w.Result) > 0 && string(w.Result) != "null" {
		var res sdk.CallToolResult
		if err := json.Unmarshal(w.Result, &res); err != nil {
			return nil, fmt.Errorf("decoding the task's result: %w", err)
		}
		st.Result = &res
	}
	return st, nil
}

// send posts one JSON-RPC request and returns its result: name is what
// the Mcp-Name header carries (the tool's name, or the task's ID).
func (t *taskRPC) send(ctx context.Context, method, name string, params, meta map[string]any) (json.RawMessage, error) {
	session := t.session
	version := ""
	if init := session.InitializeResult(); init != nil {
		version = init.ProtocolVersion
	}
	if version >= CurrentProtocolVersion {
		// Every request of the current protocol says who sends it.
		if meta == nil {
			meta = map[string]any{}
		}
		meta[sdk.MetaKeyProtocolVersion] = version
		meta[sdk.MetaKeyClientInfo] = t.impl
		ext := t.ext
		if ext == "" {
			ext = TasksExtension
		}
		meta[sdk.MetaKeyClientCapabilities] = map[string]any{"extensions": map[string]any{ext: map[string]any{}}}
	}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	id := "llmtoolkit-" + method
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	if version != "" {
		req.Header.Set(protocolVersionHeader, version)
	}
	if sid := session.ID(); sid != "" {
		req.Header.Set(sessionIDHeader, sid)
	}
	result, rpcErr, err := roundTripRPC(t.next, req, `"`+id+`"`, t.maxBytes)
	if err != nil {
		return nil, err
	}
	if rpcErr != nil {
		// The extension keeps -32602 for a taskId the server does not hold.
		if rpcErr.Code == jsonrpc.CodeInvalidParams && strings.HasPrefix(method, "tasks/") {
			return nil, fmt.Errorf("%w (the server: %w)", ErrTaskNotFound, rpcErr)
		}
		return nil, rpcErr
	}
	return result, nil
}
