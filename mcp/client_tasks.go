package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxTaskAnswerBytes caps what the task follower reads of one answer.
const maxTaskAnswerBytes = 32 << 20

// WithClientTasks makes [Connect] over [HTTPTransport] a client of MCP's
// tasks extension ([TasksExtension]): it declares it, and a tool call the
// server answers with a task is followed to its end (tasks/get, at the
// task's poll interval, between 100 ms and 5 s), so that the call returns
// the task's result as a synchronous call would. When the call's context
// ends first, the task is cancelled (tasks/cancel). A task that asks for
// input (input_required) is cancelled too, and the call fails: this client
// answers input requests of synchronous calls only. It has no effect on
// other transports, nor on a server.
func WithClientTasks() Option { return func(c *config) { c.clientTasks = true } }

// clientTasksTransport makes transport follow tasks, and caps the client's
// capabilities with the extension; it returns transport unchanged, and no
// follower, when it is not the SDK's streamable HTTP one.
func clientTasksTransport(transport sdk.Transport, copts *sdk.ClientOptions) (sdk.Transport, *taskFollower) {
	t, ok := transport.(*sdk.StreamableClientTransport)
	if !ok {
		return transport, nil
	}
	c := *t
	hc := http.DefaultClient
	if c.HTTPClient != nil {
		hc = c.HTTPClient
	}
	follow := *hc
	next := hc.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	follower := &taskFollower{next: next, endpoint: t.Endpoint}
	follow.Transport = follower
	c.HTTPClient = &follow
	// The SDK's default when Capabilities is nil, which setting it drops.
	//lint:ignore SA1019 the roots capability stays what it was without this option
	caps := &sdk.ClientCapabilities{RootsV2: &sdk.RootCapabilities{ListChanged: true}}
	if copts.Capabilities != nil {
		c := *copts.Capabilities
		c.Extensions = make(map[string]any, len(copts.Capabilities.Extensions)+1)
		for k, v := range copts.Capabilities.Extensions {
			c.Extensions[k] = v
		}
		caps = &c
	}
	caps.AddExtension(TasksExtension, map[string]any{})
	copts.Capabilities = caps
	return &c, follower
}

// taskFollower is an http.RoundTripper that follows the tasks the server
// answers tools/call with, and answers the call with the task's outcome.
type taskFollower struct {
	next     http.RoundTripper
	endpoint string // the session's URL, for the Client's task methods
}

func (f *taskFollower) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodPost || req.Body == nil || req.Header.Get("Mcp-Method") != "tools/call" {
		return f.next.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	var call struct {
		ID     json.RawMessage `json:"id"`
		Params struct {
			Meta json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	_ = json.Unmarshal(body, &call) // a batch or a notification: not followed
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	resp, err := f.next.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusOK || len(call.ID) == 0 {
		return resp, err
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxTaskAnswerBytes))
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	msg := answerFor(data, resp.Header.Get("Content-Type"), call.ID)
	var created struct {
		Result *struct {
			ResultType     string `json:"resultType"`
			TaskID         string `json:"taskId"`
			PollIntervalMs int64  `json:"pollIntervalMs"`
		} `json:"result"`
	}
	if msg == nil || json.Unmarshal(msg, &created) != nil || created.Result == nil || created.Result.ResultType != "task" || created.Result.TaskID == "" {
		resp.Body = io.NopCloser(bytes.NewReader(data))
		return resp, nil
	}
	out, err := f.follow(req, call.ID, call.Params.Meta, created.Result.TaskID, time.Duration(created.Result.PollIntervalMs)*time.Millisecond)
	if err != nil {
		return nil, err
	}
	return &http.Response{StatusCode: http.StatusOK, Status: "200 OK", Proto: resp.Proto, ProtoMajor: resp.ProtoMajor, ProtoMinor: resp.ProtoMinor,
		Header: http.Header{"Content-Type": {"application/json"}}, Body: io.NopCloser(bytes.NewReader(out)),
		ContentLength: int64(len(out)), Request: req}, nil
}

// answerFor returns the JSON-RPC message answering id in data, a JSON
// body or an SSE stream.
func answerFor(data []byte, contentType string, id json.RawMessage) json.RawMessage {
	if !strings.HasPrefix(contentType, "text/event-stream") {
		return data
	}
	var found json.RawMessage
	for _, line := range strings.Split(string(data), "\n") {
		rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), "data:")
		if !ok {
			continue
		}
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal([]byte(rest), &m) == nil && bytes.Equal(bytes.TrimSpace(m.ID), bytes.TrimSpace(id)) {
			found = json.RawMessage(strings.TrimSpace(rest))
		}
	}
	return found
}

// follow polls the task until it ends and returns the JSON-RPC answer of
// the call: the task's result, or its error.
func (f *taskFollower) follow(orig *http.Request, id, meta json.RawMessage, taskID string, every time.Duration) ([]byte, error) {
	ctx := orig.Context()
	every = min(max(every, 100*time.Millisecond), 5*time.Second)
	for {
		task, err := f.task(ctx, orig, "tasks/get", meta, taskID)
		if err != nil {
			f.cancel(orig, meta, taskID)
			return nil, err
		}
		var t struct {
			Status        TaskStatus                 `json:"status"`
			StatusMessage string                     `json:"statusMessage"`
			Result        json.RawMessage            `json:"result"`
			Error         json.RawMessage            `json:"error"`
			InputRequests map[string]json.RawMessage `json:"inputRequests"`
		}
		if err := json.Unmarshal(task, &t); err != nil {
			return nil, fmt.Errorf("mcp: decoding task %s: %w", taskID, err)
		}
		answer := func(key string, v any) ([]byte, error) {
			return json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, key: v})
		}
		switch t.Status {
		case TaskCompleted:
			return answer("result", t.Result)
		case TaskFailed:
			return answer("error", t.Error)
		case TaskCancelled:
			return answer("error", &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the task was cancelled: " + t.StatusMessage})
		case TaskInputRequired:
			f.cancel(orig, meta, taskID)
			return answer("error", &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: fmt.Sprintf("the task asked for input (%d requests) this client does not answer in tasks: cancelled", len(t.InputRequests))})
		}
		select {
		case <-ctx.Done():
			f.cancel(orig, meta, taskID)
			return nil, ctx.Err()
		case <-time.After(every):
		}
	}
}

// cancel sends tasks/cancel, best effort, within 5 s.
func (f *taskFollower) cancel(orig *http.Request, meta json.RawMessage, taskID string) {
	ctx, stop := context.WithTimeout(context.WithoutCancel(orig.Context()), 5*time.Second)
	defer stop()
	_, _ = f.task(ctx, orig, "tasks/cancel", meta, taskID)
}

// task sends one request of the tasks extension with the headers of the
// original call, and returns its result.
func (f *taskFollower) task(ctx context.Context, orig *http.Request, method string, meta json.RawMessage, taskID string) (json.RawMessage, error) {
	params := map[string]any{"taskId": taskID}
	if len(meta) > 0 {
		params["_meta"] = meta
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "task-" + taskID, "method": method, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, orig.URL.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = orig.Header.Clone()
	req.Header.Del("Content-Length")
	req.Header.Set("Mcp-Method", method)
	req.Header.Set("Mcp-Name", taskID)
	req.Header.Set("Accept", "application/json, text/event-stream")
	result, rpcErr, err := roundTripRPC(f.next, req, `"task-`+taskID+`"`, maxTaskAnswerBytes)
	if err != nil {
		return nil, fmt.Errorf("mcp: %s of task %s: %w", method, taskID, err)
	}
	if rpcErr != nil {
		return nil, fmt.Errorf("mcp: %s of task %s: %w", method, taskID, rpcErr)
	}
	return result, nil
}

// roundTripRPC sends req, one JSON-RPC request whose id is the JSON id,
// reads at most limit bytes of the answer (a JSON body or an SSE stream)
// and returns its result or its error.
func roundTripRPC(next http.RoundTripper, req *http.Request, id string, limit int64) (json.RawMessage, *jsonrpc.Error, error) {
	resp, err := next.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, nil, err
	}
	if int64(len(data)) > limit {
		return nil, nil, fmt.Errorf("the answer is over %d bytes", limit)
	}
	msg := answerFor(data, resp.Header.Get("Content-Type"), json.RawMessage(id))
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *jsonrpc.Error  `json:"error"`
	}
	if len(msg) == 0 || json.Unmarshal(msg, &out) != nil {
		return nil, nil, fmt.Errorf("HTTP %d without a JSON-RPC answer: %.200s", resp.StatusCode, strings.TrimSpace(string(data)))
	}
	return out.Result, out.Error, nil
}
