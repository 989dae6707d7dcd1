package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// DefaultMaxTasks is how many tasks a [MemoryTaskStore] keeps at most by
// default.
const DefaultMaxTasks = 10000

// DefaultMaxTaskBytes is how many bytes of tasks (arguments, input,
// results) a [MemoryTaskStore] keeps at most by default.
const DefaultMaxTaskBytes = 256 << 20

// MemoryTaskStore is a [TaskStore] in this process's memory: the default
// of [Handler]. It serves one process only: behind a load balancer, a
// task's tasks/get lands on a replica that does not know it (and answers
// that there is no such task), and a task dies with its process. Use a
// shared, durable store for replicas (package durable/dbos).
//
// It is bounded: a task is forgotten once its TTL has passed since its
// creation (its run cancelled if it still runs), and a Create beyond its
// caps (a number of tasks, a number of bytes) first forgets the oldest
// finished tasks, or fails with [ErrTaskStoreFull] when every task it keeps
// is still live. One owner (the caller's tenant under [WithBearerAuth],
// else the MCP session that created the task) holds at most a share of
// each cap ([DefaultTaskOwnerShare]: a quarter) and makes room by
// forgetting its own finished tasks; another owner's finished task is
// forgotten for it only once [DefaultTaskGrace] has passed since it
// finished, so that one tenant can neither evict another's results before
// they are read nor starve it of room (TestTaskStoreOwnerShares). A result that would take the store over its bytes with
// no finished task left to forget fails its task instead (a -32603 error
// saying so). Each run is a
// goroutine that recovers its panics; it is cancelled when its task becomes
// terminal (cancelled) or is forgotten.
type MemoryTaskStore struct {
	max      int
	maxBytes int64
	now      func() time.Time

	mu      sync.Mutex
	run     TaskRunFunc
	tasks   map[string]*Task
	order   []string // creation order, for eviction
	cancels map[string]*memoryRun
	closed  bool
	sizes   map[string]int64
	bytes   int64
	shares  map[string]share // by owner (see ownerKey)
	grace   time.Duration    // see DefaultTaskGrace
}

// memoryRun is a run in progress.
type memoryRun struct{ cancel context.CancelFunc }

// NewMemoryTaskStore returns a [MemoryTaskStore] keeping at most maxTasks
// tasks (0 or less means [DefaultMaxTasks]) of at most maxBytes in all (0
// or less means [DefaultMaxTaskBytes]).
func NewMemoryTaskStore(maxTasks int, maxBytes int64) *MemoryTaskStore {
	if maxTasks <= 0 {
		maxTasks = DefaultMaxTasks
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxTaskBytes
	}
	return &MemoryTaskStore{max: maxTasks, maxBytes: maxBytes, now: time.Now, tasks: map[string]*Task{},
		cancels: map[string]*memoryRun{}, sizes: map[string]int64{}, shares: map[string]share{}, grace: DefaultTaskGrace}
}

// taskSize is what t weighs in memory, roughly: its JSON parts.
func taskSize(t *Task) int64 {
	n := int64(len(t.Call.Arguments) + len(t.Call.RequestState) + len(t.Call.Capabilities) + len(t.Result) + len(t.StatusMessage) + 256)
	for k, v := range t.InputRequests {
		n += int64(len(k) + len(v))
	}
	for k, v := range t.Call.Responses {
		n += int64(len(k) + len(v))
	}
	if t.Error != nil {
		n += int64(len(t.Error.Message) + len(t.Error.Data))
	}
	return n
}

// makeRoomLocked forgets finished tasks but keep until n more bytes of
// owner fit, in the store and in owner's share, reporting whether they
// do: owner's own oldest first, then, for the store's cap, other owners'
// whose grace has passed.
func (s *MemoryTaskStore) makeRoomLocked(n int64, keep, owner string) bool {
	_, shareBytes := s.ownerCaps(owner)
	for s.shares[owner].bytes+n > shareBytes {
		if !s.evictLocked(keep, owner, true) {
			return false
		}
	}
	for s.bytes+n > s.maxBytes {
		if !s.evictLocked(keep, owner, false) {
			return false
		}
	}
	return true
}

// Bind sets the function that runs a task's round.
func (s *MemoryTaskStore) Bind(run TaskRunFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.run = run
}

// Create records a copy of t, making room as [MemoryTaskStore] says.
func (s *MemoryTaskStore) Create(_ context.Context, t *Task) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	if _, ok := s.tasks[t.ID]; ok {
		return fmt.Errorf("mcp: task %q exists already", t.ID)
	}
	owner := ownerKey(t)
	shareTasks, _ := s.ownerCaps(owner)
	if s.shares[owner].tasks >= shareTasks && !s.evictLocked("", owner, true) {
		return fmt.Errorf("%w: this owner's share (%d tasks) holds only live tasks", ErrTaskStoreFull, shareTasks)
	}
	if len(s.tasks) >= s.max && !s.evictLocked("", owner, false) {
		return fmt.Errorf("%w: %d tasks, live or finished too recently to forget", ErrTaskStoreFull, len(s.tasks))
	}
	size := taskSize(t)
	if !s.makeRoomLocked(size, "", owner) {
		return fmt.Errorf("%w: %d bytes of tasks, live or finished too recently to forget", ErrTaskStoreFull, s.bytes)
	}
	c := cloneTask(t)
	s.tasks[t.ID] = c
	s.order = append(s.order, t.ID)
	s.sizes[t.ID] = size
	s.bytes += size
	s.account(c, 1, size)
	return nil
}

// Get returns a copy of the task id.
func (s *MemoryTaskStore) Get(_ context.Context, id string) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	t, ok := s.tasks[id]
	if !ok {
		return nil, ErrTaskNotFound
	}
	return cloneTask(t), nil
}

// Update changes the task id with fn under the store's lock; a task that
// becomes terminal has its run cancelled.
func (s *MemoryTaskStore) Update(_ context.Context, id string, fn func(*Task) error) (*Task, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked()
	t, ok := s.tasks[id]
	if !ok {
		return nil, ErrTaskNotFound
	}
	c := cloneTask(t)
	if err := fn(c); err != nil {
		return nil, err
	}
	size := taskSize(c)
	if grow := size - s.sizes[id]; grow > 0 && !s.makeRoomLocked(grow, id, ownerKey(t)) {
		c.Result, c.InputRequests, c.Call.Responses = nil, nil, nil
		c.Status, c.Error = TaskFailed, &TaskError{Code: -32603, Message: "the task's result does not fit in the server's task store"}
		size = taskSize(c)
	}
	s.bytes += size - s.sizes[id]
	s.account(t, 0, size-s.sizes[id])
	s.sizes[id] = size
	c.Owner, c.Session = t.Owner, t.Session // the share it counts in stays
	s.tasks[id] = c
	if c.Status.Terminal() {
		if r := s.cancels[id]; r != nil {
			r.cancel()
		}
	}
	return cloneTask(c), nil
}

// Run starts round of the task id on a goroutine of its own.
func (s *MemoryTaskStore) Run(_ context.Context, id string, round int) error {
	s.mu.Lock()
	run := s.run
	if _, ok := s.tasks[id]; !ok {
		s.mu.Unlock()
		return ErrTaskNotFound
	}
	if run == nil || s.closed {
		s.mu.Unlock()
		return fmt.Errorf("mcp: the task store is closed, or bound to no server")
	}
	ctx, cancel := context.WithCancel(context.Background())
	if prev := s.cancels[id]; prev != nil {
		prev.cancel()
	}
	r := &memoryRun{cancel: cancel}
	s.cancels[id] = r
	s.mu.Unlock()
	// The run's errors are its own to log (the server's TaskRunFunc does);
	// a panic is logged by guard. The channel is buffered: no one waits.
	guard.Go("mcp task", func() error {
		defer func() {
			cancel()
			s.mu.Lock()
			defer s.mu.Unlock()
			if s.cancels[id] == r { // not replaced by a later round
				delete(s.cancels, id)
			}
		}()
		return run(ctx, id, round)
	}, nil)
	return nil
}

// Close cancels every run in progress (each returns as soon as its tool
// does) and refuses to start new ones. The tasks stay readable.
func (s *MemoryTaskStore) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	for id, r := range s.cancels {
		r.cancel()
		delete(s.cancels, id)
	}
}

// expireLocked forgets the tasks whose TTL has passed.
func (s *MemoryTaskStore) expireLocked() {
	now := s.now()
	kept := s.order[:0]
	for _, id := range s.order {
		t := s.tasks[id]
		if t != nil && now.Sub(t.CreatedAt) < t.TTL {
			kept = append(kept, id)
			continue
		}
		s.forgetLocked(id)
	}
	clear(s.order[len(kept):])
	s.order = kept
}

// evictLocked forgets the oldest finished task but keep that may make
// room for owner (its own only, with own; see evictableLocked), reporting
// whether there was one.
func (s *MemoryTaskStore) evictLocked(keep, owner string, own bool) bool {
	now := s.now()
	for i, id := range s.order {
		t := s.tasks[id]
		if t == nil || id == keep || (own && ownerKey(t) != owner) {
			continue
		}
		if s.evictableLocked(id, owner, now) {
			s.forgetLocked(id)
			s.order = append(s.order[:i], s.order[i+1:]...)
			return true
		}
	}
	return false
}

func (s *MemoryTaskStore) forgetLocked(id string) {
	if t := s.tasks[id]; t != nil {
		s.account(t, -1, -s.sizes[id])
	}
	delete(s.tasks, id)
	s.bytes -= s.sizes[id]
	delete(s.sizes, id)
	if r := s.cancels[id]; r != nil {
		r.cancel()
		delete(s.cancels, id)
	}
}

// cloneTask returns a deep copy of t (its JSON fields shared: they are
// never changed in place).
func cloneTask(t *Task) *Task {
	c := *t
	if t.InputRequests != nil {
		c.InputRequests = make(map[string]json.RawMessage, len(t.InputRequests))
		for k, v := range t.InputRequests {
			c.InputRequests[k] = v
		}
	}
	if t.Call.Responses != nil {
		c.Call.Responses = make(map[string]json.RawMessage, len(t.Call.Responses))
		for k, v := range t.Call.Responses {
			c.Call.Responses[k] = v
		}
	}
	if t.Call.Trace != nil {
		c.Call.Trace = make(map[string]any, len(t.Call.Trace))
		for k, v := range t.Call.Trace {
			c.Call.Trace[k] = v
		}
	}
	if t.Error != nil {
		e := *t.Error
		c.Error = &e
	}
	if t.Owner != nil {
		o := *t.Owner
		c.Owner = &o
	}
	return &c
}
