package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestTaskStoreOwnerShares: tenant A flooding the default MemoryTaskStore
// (shared by every tenant) evicted tenant B's finished task before B read
// it, and left B no room to start one. Each owner now holds at most a
// share of the store (a quarter of its tasks and bytes), makes room by
// forgetting its own finished tasks, and another owner's finished task is
// kept for a grace period.
func TestTaskStoreOwnerShares(t *testing.T) {
	ctx := context.Background()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	newStore := func(maxTasks int, maxBytes int64) *MemoryTaskStore {
		s := NewMemoryTaskStore(maxTasks, maxBytes)
		s.now = func() time.Time { return clock }
		return s
	}
	n := 0
	task := func(tenant string, args int) *Task {
		n++
		return &Task{ID: fmt.Sprintf("t%d", n), Status: TaskWorking, CreatedAt: clock, UpdatedAt: clock, TTL: time.Hour,
			Owner: &Identity{Tenant: tenant, Conversation: "c"}, Call: TaskCall{Tool: "wait", Arguments: json.RawMessage(`"` + strings.Repeat("x", args) + `"`)}}
	}
	finish := func(s *MemoryTaskStore, id string) {
		_, err := s.Update(ctx, id, func(t *Task) error {
			t.Status, t.UpdatedAt, t.Result = TaskCompleted, clock, json.RawMessage(`{"content":[]}`)
			return nil
		})
		require.NoError(t, err)
	}

	t.Run("by count", func(t *testing.T) {
		s := newStore(8, 1<<30)
		b := task("B", 10)
		require.NoError(t, s.Create(ctx, b))
		finish(s, b.ID)
		a1, a2 := task("A", 10), task("A", 10)
		require.NoError(t, s.Create(ctx, a1))
		require.NoError(t, s.Create(ctx, a2))
		require.ErrorIs(t, s.Create(ctx, task("A", 10)), ErrTaskStoreFull, "A's share (2 of 8) holds only live tasks")
		finish(s, a1.ID)
		finish(s, a2.ID)
		for range 68 { // A floods: each new task forgets A's own oldest finished one
			a := task("A", 10)
			require.NoError(t, s.Create(ctx, a))
			finish(s, a.ID)
		}
		got, err := s.Get(ctx, b.ID)
		require.NoError(t, err, "B's finished task survives A's flood")
		assert.Equal(t, TaskCompleted, got.Status)
		assert.NoError(t, s.Create(ctx, task("B", 10)), "and B can still start one")
	})
	t.Run("by bytes", func(t *testing.T) {
		s := newStore(1000, 16<<20)
		b := task("B", 1000)
		require.NoError(t, s.Create(ctx, b))
		finish(s, b.ID)
		for range 64 { // 64 tasks of ~3 MiB of arguments: A's share is 4 MiB
			a := task("A", 3<<20)
			require.NoError(t, s.Create(ctx, a))
			finish(s, a.ID)
		}
		require.ErrorIs(t, s.Create(ctx, task("A", 5<<20)), ErrTaskStoreFull, "one task past A's share")
		_, err := s.Get(ctx, b.ID)
		require.NoError(t, err, "B's finished task survives")
		assert.NoError(t, s.Create(ctx, task("B", 1<<20)))
		assert.LessOrEqual(t, s.bytes, int64(16<<20))
	})
	t.Run("grace", func(t *testing.T) {
		s := newStore(8, 1<<30)
		var bs []*Task
		for _, tenant := range []string{"A", "B", "C", "D"} {
			for range 2 {
				x := task(tenant, 10)
				require.NoError(t, s.Create(ctx, x))
				if tenant == "B" {
					finish(s, x.ID)
					bs = append(bs, x)
				}
			}
		}
		require.ErrorIs(t, s.Create(ctx, task("E", 10)), ErrTaskStoreFull, "B's finished tasks are in their grace")
		_, err := s.Get(ctx, bs[0].ID)
		require.NoError(t, err)
		clock = clock.Add(DefaultTaskGrace)
		require.NoError(t, s.Create(ctx, task("E", 10)), "past the grace, a finished task makes room")
		_, err = s.Get(ctx, bs[0].ID)
		assert.ErrorIs(t, err, ErrTaskNotFound, "the oldest finished one went")
	})
}

// TestTaskArgumentsValidatedBeforeStored: a task call's arguments were
// stored before any schema check (a flood of 4 MiB of bad arguments filled
// the store). A call whose arguments its tool's schema refuses is now
// answered at once with the error result, and no task is stored.
func TestTaskArgumentsValidatedBeforeStored(t *testing.T) {
	store := NewMemoryTaskStore(0, 0)
	schema := map[string]any{"type": "object", "properties": map[string]any{"n": map[string]any{"type": "integer"}},
		"required": []any{"n"}, "additionalProperties": false}
	f := llmtoolkittest.NewFake(nil).Add(llmtoolkit.MustTool("count", "Counts.", schema),
		func(context.Context, llmtoolkit.Call) (string, error) { return "counted", nil })
	srv := httptest.NewServer(Handler(f, WithTaskTools(map[string]TaskSupport{"count": TaskRequired}), WithTaskStore(store)))
	t.Cleanup(srv.Close)
	c := taskClient{url: srv.URL, declare: true}

	res := c.do(t, "tools/call", map[string]any{"name": "count", "arguments": map[string]any{"n": "x", "junk": strings.Repeat("y", 1<<20)}}, nil)
	require.Nil(t, res.Error)
	assert.Equal(t, true, res.Result["isError"], "%v", res.Result)
	assert.Contains(t, fmt.Sprint(res.Result["content"]), "invalid arguments")
	store.mu.Lock()
	stored := len(store.tasks)
	store.mu.Unlock()
	assert.Zero(t, stored, "nothing stored for a call that would be refused")

	res = c.do(t, "tools/call", map[string]any{"name": "count", "arguments": map[string]any{"n": 1}}, nil)
	require.Nil(t, res.Error)
	assert.Equal(t, "task", res.Result["resultType"])
}
