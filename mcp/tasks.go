package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/calltask"
)

// TasksExtension is the name of MCP's tasks extension (SEP-2663), under
// which a server that runs tool calls as tasks advertises it
// (capabilities.extensions) and a client declares it.
const TasksExtension = "io.modelcontextprotocol/tasks"

// DefaultTaskTTL is how long a task is kept, from its creation, unless
// [WithTaskTTL] says otherwise.
const DefaultTaskTTL = time.Hour

// DefaultTaskPollInterval is the pollIntervalMs a task tells its client.
const DefaultTaskPollInterval = 500 * time.Millisecond

// Errors of tasks callers branch on.
var (
	// ErrTaskNotFound is wrapped by a [TaskStore]'s error for an ID it
	// does not hold (never created, or expired).
	ErrTaskNotFound = errors.New("mcp: no task with this ID")
	// ErrTaskStoreFull is wrapped by a [TaskStore]'s Create when it holds
	// as many live tasks as it may.
	ErrTaskStoreFull = errors.New("mcp: the task store is full")
	// ErrRunAsTask is returned (or wrapped) by a tool of [TaskOnDemand]
	// support to go on as a task: the call's answer is a task, and the tool
	// is called again, in it ([TaskIDFrom] then returns its ID), with the
	// same arguments and input ([InputFrom]).
	//
	// A tool of [TaskOnDemand] support whose client runs tasks is told so
	// on its context: codetools' bash with run_in_background then goes on
	// as a task that runs the command to its end (tasks/cancel kills it)
	// rather than as a job of its own; so does exec_command without tty
	// (with tty it stays a session that write_stdin types into).
	ErrRunAsTask = calltask.ErrRunAsTask
)

// TaskSupport says whether a tool's calls run as tasks ([WithTaskTools]).
type TaskSupport int

const (
	// TaskNever: the tool's calls answer synchronously (the default).
	TaskNever TaskSupport = iota
	// TaskOptional: a call runs as a task when its client declared
	// [TasksExtension] (at initialize, or in the call's _meta), and
	// synchronously otherwise.
	TaskOptional
	// TaskRequired: a call always runs as a task; a client that did not
	// declare [TasksExtension] is answered the protocol's
	// MissingRequiredClientCapability error (-32021).
	TaskRequired
	// TaskOnDemand: a call runs synchronously (it may ask for input with
	// [InputRequired], round after round) until the tool returns
	// [ErrRunAsTask]: then it goes on as a task, as a TaskRequired one.
	TaskOnDemand
)

// TaskStatus is the status of a task, as MCP names it.
type TaskStatus string

// The statuses of a task. Completed, failed and cancelled are terminal.
const (
	TaskWorking       TaskStatus = "working"
	TaskInputRequired TaskStatus = "input_required"
	TaskCompleted     TaskStatus = "completed"
	TaskFailed        TaskStatus = "failed"
	TaskCancelled     TaskStatus = "cancelled"
)

// Terminal reports whether s is a final status.
func (s TaskStatus) Terminal() bool {
	return s == TaskCompleted || s == TaskFailed || s == TaskCancelled
}

// Task is one tool call running as an MCP task, as a [TaskStore] keeps it.
// It is plain JSON, so that a durable store can keep it as it is.
type Task struct {
	// ID is the task's ID, random and unguessable (128 bits).
	ID string `json:"id"`
	// Status is where the task is.
	Status TaskStatus `json:"status"`
	// StatusMessage says more about the status, when there is more to say.
	StatusMessage string `json:"statusMessage,omitempty"`
	// CreatedAt and UpdatedAt are the task's creation and its last change.
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
	// TTL is how long the task is kept after its creation.
	TTL time.Duration `json:"ttl"`
	// Round counts the runs of the tool: 0 for the first, one more each
	// time the client's answers to its input requests start it again. A
	// run writes its outcome only if the task is still at its round.
	Round int `json:"round"`
	// Call is the tool call the task runs.
	Call TaskCall `json:"call"`
	// Owner is who may see and cancel the task: the caller's identity
	// under [WithBearerAuth], nil otherwise.
	Owner *Identity `json:"owner,omitempty"`
	// Session is the ID of the MCP session that created the task, when it
	// has no Owner and was created in a session: a [MemoryTaskStore]
	// gives each owner (tenant, or session) its own share.
	Session string `json:"session,omitempty"`
	// InputRequests are the input requests still unanswered, by ID, while
	// the status is input_required (each the JSON of {"method", "params"}).
	InputRequests map[string]json.RawMessage `json:"inputRequests,omitempty"`
	// Result is the tool's result (the JSON of a CallToolResult) once
	// completed.
	Result json.RawMessage `json:"result,omitempty"`
	// Error is the protocol error of a failed task.
	Error *TaskError `json:"error,omitempty"`
}

// TaskCall is the tool call of a [Task]: what its runs need.
type TaskCall struct {
	// Tool is the tool's name.
	Tool string `json:"tool"`
	// Arguments are the call's arguments, as the client sent them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Responses are the client's answers to the tool's input requests,
	// by request ID (what [InputFrom] returns).
	Responses map[string]json.RawMessage `json:"responses,omitempty"`
	// RequestState is the state the tool asked to remember, signed.
	RequestState string `json:"requestState,omitempty"`
	// Capabilities are the client's capabilities (JSON), for
	// [ClientCapabilitiesFrom].
	Capabilities json.RawMessage `json:"capabilities,omitempty"`
	// Trace is the trace context of the call that created the task, as
	// the server's [MetaPropagator] wrote it: every round runs in it,
	// after a restart too.
	Trace map[string]any `json:"trace,omitempty"`
}

// TaskError is a failed task's error, a JSON-RPC error.
type TaskError struct {
	Code    int64           `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

// TaskRunFunc runs round of the task id: the function a [TaskStore] is
// given by [TaskStore.Bind]. It reads the task from the store, runs
// its tool and writes the outcome, unless the task was cancelled or moved
// to another round meanwhile.
type TaskRunFunc func(ctx context.Context, id string, round int) error

// TaskStore keeps the tasks of a server ([WithTaskStore]) and runs them.
// Every method is safe for concurrent use. A store shared by several
// replicas (a database) lets any of them answer for a task: its status,
// its result, its cancellation.
type TaskStore interface {
	// Bind gives the store the function that runs a task's round. The
	// server calls it once, when built, before any other method.
	Bind(run TaskRunFunc)
	// Create records t. It returns once a Get of t.ID would find it, from
	// any replica the store serves.
	Create(ctx context.Context, t *Task) error
	// Get returns the task id, or an error wrapping [ErrTaskNotFound].
	Get(ctx context.Context, id string) (*Task, error)
	// Update changes the task id with fn, atomically: fn sees the task as
	// stored and changes it; when fn returns an error nothing is written
	// and Update returns it. fn may be called more than once (a store
	// that retries after a concurrent write), each time on a fresh copy. Update returns the task as written, or an
	// error wrapping [ErrTaskNotFound]. A store that runs the task in this
	// process cancels the run's context when the task becomes terminal.
	Update(ctx context.Context, id string, fn func(*Task) error) (*Task, error)
	// Run starts round of the task id, calling the bound [TaskRunFunc] on
	// a goroutine of its own with a context that does not end with ctx,
	// and returns without waiting. A durable store runs it again, in the
	// process that resumes it, when the process running it dies.
	Run(ctx context.Context, id string, round int) error
}

// errTaskUnchanged, returned by an Update's function, leaves the task as
// it is.
var errTaskUnchanged = errors.New("mcp: task unchanged")

type taskIDKey struct{}

// TaskIDFrom returns, in a tool served by [NewServer], the ID of the task
// the call runs in, or "" when it runs synchronously.
func TaskIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(taskIDKey{}).(string)
	return id
}

// WithTaskTools says which tools' calls run as MCP tasks (SEP-2663, the
// 2026-07-28 tasks extension), by name; a tool not named never runs as
// one. See [TaskSupport] for the rules. With at least one tool named, the
// server advertises [TasksExtension] and [Handler] serves tasks/get,
// tasks/update and tasks/cancel.
//
// Tasks are served by [Handler] only: over [Serve]'s transports a call
// runs synchronously.
func WithTaskTools(support map[string]TaskSupport) Option {
	return func(c *config) {
		if c.taskTools == nil {
			c.taskTools = make(map[string]TaskSupport, len(support))
		}
		for name, s := range support {
			c.taskTools[name] = s
		}
	}
}

// WithTaskStore sets where the server keeps its tasks: by default a
// [MemoryTaskStore] of [DefaultMaxTasks], which serves one process only.
// Replicas behind a load balancer need one store they share (package
// durable/dbos has one).
func WithTaskStore(s TaskStore) Option { return func(c *config) { c.taskStore = s } }

// WithTaskTTL sets how long a task is kept after its creation (default
// [DefaultTaskTTL]; 0 or less means the default). It is the task's ttlMs.
func WithTaskTTL(d time.Duration) Option { return func(c *config) { c.taskTTL = d } }
