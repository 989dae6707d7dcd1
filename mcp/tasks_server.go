package mcp

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// taskWatchInterval is how often a running task reads its record, to stop
// when another replica cancelled it.
const taskWatchInterval = time.Second

// taskServer is the tasks extension of a server built by NewServer: the
// middleware that turns a tools/call into a task, the run of a task's
// rounds, and the answers to tasks/get, tasks/update and tasks/cancel
// (taskRoutes, in front of the SDK's HTTP handler, since the SDK answers
// methods it does not know before any middleware).
type taskServer struct {
	store    TaskStore
	support  map[string]TaskSupport
	ttl      time.Duration
	r        llmtoolkit.Resolver
	auth     *AuthConfig
	signer   stateSigner
	impl     *sdk.Implementation
	log      *slog.Logger
	handlers map[string]sdk.ToolHandler
	ownStore bool           // store is the default one, made here
	prop     MetaPropagator // see WithPropagator
}

func newTaskServer(cfg config, r llmtoolkit.Resolver, signer stateSigner) *taskServer {
	store, own := cfg.taskStore, false
	if store == nil {
		store, own = NewMemoryTaskStore(0, 0), true
	}
	return &taskServer{ownStore: own,
		store: store, support: cfg.taskTools, ttl: cfg.taskTTL, r: r, auth: cfg.auth, signer: signer,
		impl: &sdk.Implementation{Name: cfg.name, Version: cfg.version}, log: cfg.warnLogger(),
		handlers: map[string]sdk.ToolHandler{}, prop: cfg.propagator,
	}
}

// declaresTasks reports whether caps declare the tasks extension.
func declaresTasks(caps *sdk.ClientCapabilities) bool {
	if caps == nil {
		return false
	}
	_, ok := caps.Extensions[TasksExtension]
	return ok
}

// errMissingTasks is the protocol's error for a client that did not
// declare the tasks extension.
func errMissingTasks() error {
	caps := &sdk.ClientCapabilities{}
	caps.AddExtension(TasksExtension, map[string]any{})
	data, _ := json.Marshal(sdk.MissingRequiredClientCapabilityData{RequiredCapabilities: caps})
	return &jsonrpc.Error{Code: sdk.CodeMissingRequiredClientCapabilities,
		Message: "this call runs as a task: the client must declare the " + TasksExtension + " extension", Data: data}
}

// middleware turns a tools/call of a task tool into a task (see
// TaskSupport). It runs after the authorization and rate limits, which
// are added after it.
func (ts *taskServer) middleware(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctr, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok || ctr.Params == nil {
			return next(ctx, method, req)
		}
		support := ts.support[ctr.Params.Name]
		declared := declaresTasks(ctr.ClientCapabilities())
		switch support {
		case TaskOptional:
			if !declared {
				return next(ctx, method, req)
			}
		case TaskRequired:
			if !declared {
				return nil, errMissingTasks()
			}
		case TaskOnDemand:
			callCtx := ctx
			if declared {
				callCtx = calltask.WithOffer(ctx) // the tool may go on as a task
			}
			res, err := next(callCtx, method, req)
			if !errors.Is(err, ErrRunAsTask) {
				return res, err
			}
			if !declared {
				return nil, errMissingTasks()
			}
		default:
			return next(ctx, method, req)
		}
		return ts.create(ctx, ctr)
	}
}

// create records the task of ctr and starts its first round.
func (ts *taskServer) create(ctx context.Context, ctr *sdk.CallToolRequest) (sdk.Result, error) {
	p := ctr.Params
	if res, refused := ts.validate(ctx, ctr); refused {
		return res, nil // nothing stored: the model reads what is wrong
	}
	if p.RequestState != "" {
		if _, err := ts.signer.open(p.RequestState); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	call := TaskCall{Tool: p.Name, Arguments: p.Arguments, RequestState: p.RequestState}
	for k, v := range p.InputResponses {
		raw, err := json.Marshal(v)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("inputResponses[%q]: %v", k, err)}
		}
		if call.Responses == nil {
			call.Responses = map[string]json.RawMessage{}
		}
		call.Responses[k] = raw
	}
	if caps := ctr.ClientCapabilities(); caps != nil {
		call.Capabilities, _ = json.Marshal(caps) // plain data: cannot fail
	}
	if ts.prop != nil { // ctx has the request's trace context (extractTraceContext)
		carrier := map[string]any{}
		ts.prop.Inject(ctx, carrier)
		if len(carrier) > 0 {
			call.Trace = carrier
		}
	}
	now := time.Now().UTC()
	t := &Task{ID: newTaskID(), Status: TaskWorking, CreatedAt: now, UpdatedAt: now, TTL: ts.ttl, Call: call}
	if id, ok := IdentityFrom(ctx); ok {
		t.Owner = &id
	} else if ctr.Session != nil {
		t.Session = ctr.Session.ID()
	}
	if err := ts.store.Create(ctx, t); err != nil {
		ts.log.ErrorContext(ctx, "mcp: task not created", slog.String("tool", p.Name), slog.Any("error", err))
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server could not create the task: retry later"}
	}
	if err := ts.store.Run(ctx, t.ID, 0); err != nil {
		ts.log.ErrorContext(ctx, "mcp: task not started", slog.String("task", t.ID), slog.Any("error", err))
		ts.finish(ctx, t.ID, 0, func(cur *Task) {
			cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "the server could not start the task"}
		})
	}
	return ts.envelope(t, "task", false), nil
}

func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	return hex.EncodeToString(b)
}

// taskResult is the wire form of a task: a CreateTaskResult
// (resultType "task") or the DetailedTask of tasks/get.
type taskResult struct {
	sdk.ResultBase
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         TaskStatus                 `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          *TaskError                 `json:"error,omitempty"`
}

const isoMillis = "2006-01-02T15:04:05.000Z07:00"

// envelope returns the wire form of t; detailed adds what tasks/get
// inlines (input requests, result, error).
func (ts *taskServer) envelope(t *Task, resultType string, detailed bool) *taskResult {
	out := &taskResult{
		ResultType: resultType, TaskID: t.ID, Status: t.Status, StatusMessage: t.StatusMessage,
		CreatedAt: t.CreatedAt.UTC().Format(isoMillis), LastUpdatedAt: t.UpdatedAt.UTC().Format(isoMillis),
		TTLMs: max(1, t.TTL.Milliseconds()), PollIntervalMs: DefaultTaskPollInterval.Milliseconds(),
	}
	if detailed {
		switch t.Status {
		case TaskInputRequired:
			out.InputRequests = t.InputRequests
		case TaskCompleted:
			out.Result = t.Result
		case TaskFailed:
			out.Error = t.Error
		}
	}
	out.Meta = sdk.Meta{sdk.MetaKeyServerInfo: ts.impl}
	return out
}

// finish applies fn to the task if it still is at round and working.
func (ts *taskServer) finish(ctx context.Context, id string, round int, fn func(*Task)) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, err := ts.store.Update(ctx, id, func(cur *Task) error {
		if cur.Round != round || cur.Status != TaskWorking {
			return errTaskUnchanged
		}
		fn(cur)
		cur.UpdatedAt = time.Now().UTC()
		return nil
	})
	if err != nil && !errors.Is(err, errTaskUnchanged) && !errors.Is(err, ErrTaskNotFound) {
		ts.log.ErrorContext(ctx, "mcp: a task's outcome was not recorded", slog.String("task", id), slog.Any("error", err))
	}
}

// run is the TaskRunFunc bound to the store: it runs one round of a task
// and records its outcome. A round stopped because its task left it
// (cancelled, forgotten) records nothing and returns nil; one stopped by
// ctx (the process stops) records nothing and returns ctx's error: a
// durable store runs it again.
func (ts *taskServer) run(ctx context.Context, id string, round int) error {
	t, err := ts.store.Get(ctx, id)
	if err != nil {
		return fmt.Errorf("mcp: reading task %s: %w", id, err)
	}
	if t.Round != round || t.Status != TaskWorking {
		return nil
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	guard.Go("mcp task watch", func() error { ts.watch(ctx, cancel, id, round); return nil }, nil)
	out, callErr := ts.call(ctx, t)
	if err := parent.Err(); err != nil {
		return err // stopped from outside (the process stops): not an outcome
	}
	if ctx.Err() != nil {
		return nil // the task left this round (cancelled): nothing to record
	}
	ts.finish(ctx, id, round, func(cur *Task) { outcome(cur, out, callErr) })
	return nil
}

// watch cancels the round when its task is no longer at it (cancelled,
// perhaps by another replica, or forgotten).
func (ts *taskServer) watch(ctx context.Context, cancel context.CancelFunc, id string, round int) {
	tick := time.NewTicker(taskWatchInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		t, err := ts.store.Get(ctx, id)
		if errors.Is(err, ErrTaskNotFound) || (err == nil && (t.Round != round || t.Status != TaskWorking)) {
			cancel()
			return
		}
	}
}

// outcome writes into cur what a round's call gave.
func outcome(cur *Task, out *sdk.CallToolResult, err error) {
	var je *jsonrpc.Error
	switch {
	case errors.As(err, &je):
		cur.Status, cur.Error = TaskFailed, &TaskError{Code: je.Code, Message: je.Message, Data: je.Data}
	case err != nil:
		cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "internal error of the MCP server while running the task"}
	case out == nil:
		cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "the tool gave no result"}
	case out.InputRequests != nil:
		reqs, merr := inputRequestsJSON(out.InputRequests)
		if merr != nil || len(reqs) == 0 {
			cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "the tool asked for input the server cannot send"}
			return
		}
		cur.Status, cur.InputRequests = TaskInputRequired, reqs
		cur.Call.RequestState, cur.Call.Responses = out.RequestState, nil
	default:
		if out.Content == nil {
			out.Content = []sdk.Content{}
		}
		raw, merr := json.Marshal(out)
		if merr != nil {
			cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "the tool's result cannot be encoded"}
			return
		}
		cur.Status, cur.Result = TaskCompleted, raw
	}
}

func inputRequestsJSON(m sdk.InputRequestMap) (map[string]json.RawMessage, error) {
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	return out, json.Unmarshal(raw, &out)
}

// call runs the task's tool through its handler, as a tools/call would,
// with the caller's identity and tools, the task's ID and its input.
func (ts *taskServer) call(ctx context.Context, t *Task) (*sdk.CallToolResult, error) {
	h := ts.handlers[t.Call.Tool]
	if h == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", t.Call.Tool)}
	}
	params := &sdk.CallToolParamsRaw{Name: t.Call.Tool, Arguments: t.Call.Arguments, RequestState: t.Call.RequestState}
	if len(t.Call.Responses) > 0 {
		raw, _ := json.Marshal(t.Call.Responses) // raw JSON values: cannot fail
		if err := json.Unmarshal(raw, &params.InputResponses); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "inputResponses: " + err.Error()}
		}
	}
	if len(t.Call.Capabilities) > 0 {
		var caps map[string]any
		if json.Unmarshal(t.Call.Capabilities, &caps) == nil {
			params.Meta = sdk.Meta{sdk.MetaKeyClientCapabilities: caps}
		}
	}
	if t.Owner != nil {
		ctx = withIdentity(ctx, *t.Owner)
		if ts.auth != nil {
			cr, err := policyResolver(ts.r, ts.auth.Tools, *t.Owner)
			if err != nil || cr == nil {
				return textResult(fmt.Sprintf("tool %q is not available to this caller", t.Call.Tool), true), nil
			}
			ctx = context.WithValue(ctx, callerResolverKey{}, cr)
		}
	}
	if ts.prop != nil && len(t.Call.Trace) > 0 {
		ctx = ts.prop.Extract(ctx, t.Call.Trace)
	}
	ctx = calltask.WithTask(context.WithValue(ctx, taskIDKey{}, t.ID))
	return h(ctx, &sdk.CallToolRequest{Params: params})
}

// get returns the task id if the caller (nil without authorization) may
// see it.
func (ts *taskServer) get(ctx context.Context, id string, caller *Identity) (*Task, error) {
	t, err := ts.store.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	if !sameOwner(t.Owner, caller) {
		return nil, ErrTaskNotFound
	}
	return t, nil
}

func sameOwner(owner, caller *Identity) bool {
	if owner == nil { // served without authorization
		return true
	}
	return caller != nil && owner.Tenant == caller.Tenant && owner.Subject == caller.Subject
}

// cancelTask marks the task cancelled unless it is terminal: its run
// stops (the store cancels a run of this process; another replica's run
// sees it within taskWatchInterval).
func (ts *taskServer) cancelTask(ctx context.Context, id string) error {
	_, err := ts.store.Update(ctx, id, func(cur *Task) error {
		if cur.Status.Terminal() {
			return errTaskUnchanged
		}
		cur.Status, cur.StatusMessage, cur.InputRequests = TaskCancelled, "cancelled by the client", nil
		cur.UpdatedAt = time.Now().UTC()
		return nil
	})
	if errors.Is(err, errTaskUnchanged) {
		return nil
	}
	return err
}

// respond records the client's answers to pending input requests; when
// none is left pending the task's next round starts.
func (ts *taskServer) respond(ctx context.Context, id string, responses map[string]json.RawMessage) error {
	next := -1
	_, err := ts.store.Update(ctx, id, func(cur *Task) error {
		next = -1 // fn may run again when a store retries
		if cur.Status != TaskInputRequired {
			return errTaskUnchanged
		}
		changed := false
		for k, v := range responses {
			if _, pending := cur.InputRequests[k]; !pending {
				continue // not asked (or answered already): ignored
			}
			if cur.Call.Responses == nil {
				cur.Call.Responses = map[string]json.RawMessage{}
			}
			cur.Call.Responses[k] = v
			delete(cur.InputRequests, k)
			changed = true
		}
		if !changed {
			return errTaskUnchanged
		}
		if len(cur.InputRequests) == 0 {
			cur.Status, cur.InputRequests = TaskWorking, nil
			cur.Round++
			next = cur.Round
		}
		cur.UpdatedAt = time.Now().UTC()
		return nil
	})
	if errors.Is(err, errTaskUnchanged) {
		return nil
	}
	if err != nil {
		return err
	}
	if next >= 0 {
		if err := ts.store.Run(ctx, id, next); err != nil {
			ts.log.ErrorContext(ctx, "mcp: task round not started", slog.String("task", id), slog.Any("error", err))
			ts.finish(ctx, id, next, func(cur *Task) {
				cur.Status, cur.Error = TaskFailed, &TaskError{Code: jsonrpc.CodeInternalError, Message: "the server could not resume the task"}
			})
		}
	}
	return nil
}
