package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

func todoCall(items ...map[string]any) llmtoolkit.Call {
	list := make([]any, len(items))
	for i, it := range items {
		list[i] = it
	}
	return llmtoolkit.Call{Name: agent.TodoToolName, Arguments: map[string]any{"todos": list}}
}

func item(content, status string) map[string]any {
	return map[string]any{"content": content, "status": status}
}

func session(id string) context.Context {
	return llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"conversation_id": id} })
}

func TestTodoWrite(t *testing.T) {
	var changes [][]agent.Todo
	todos := agent.NewTodos(agent.TodoConfig{OnChange: func(_ context.Context, key string, list []agent.Todo) {
		assert.Equal(t, "conv-1", key)
		changes = append(changes, list)
	}})
	ctx := session("conv-1")
	res := llmtoolkit.Execute(ctx, todos, todoCall(item("read the code", "in_progress"), item("fix the bug", "pending")))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Todo list updated: 2 items (0 completed, 1 in progress, 1 pending). In progress: read the code", res.Content)
	want := []agent.Todo{{ID: "1", Content: "read the code", Status: agent.StatusInProgress}, {ID: "2", Content: "fix the bug", Status: agent.StatusPending}}
	assert.Equal(t, want, todos.List("conv-1"))
	assert.Equal(t, want, todos.ListFrom(ctx))
	require.NotNil(t, res.Display)
	assert.Equal(t, agent.DisplayTodos, res.Display.Kind)
	assert.Equal(t, agent.TodosPayload{Todos: want}, res.Display.Payload)

	// Rewritten without ids, reordered, one new: ids stay with their content.
	res = llmtoolkit.Execute(ctx, todos, todoCall(item("fix the bug", "in_progress"), item("run the tests", "pending"), item("read the code", "completed")))
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []agent.Todo{
		{ID: "2", Content: "fix the bug", Status: agent.StatusInProgress},
		{ID: "3", Content: "run the tests", Status: agent.StatusPending},
		{ID: "1", Content: "read the code", Status: agent.StatusCompleted},
	}, todos.List("conv-1"))
	assert.Len(t, changes, 2)

	// The model's own ids are kept.
	res = llmtoolkit.Execute(ctx, todos, todoCall(map[string]any{"id": "a", "content": "x", "status": "pending"}, item("y", "pending")))
	require.False(t, res.IsError, res.Content)
	got := todos.List("conv-1")
	assert.Equal(t, "a", got[0].ID)
	assert.Equal(t, "4", got[1].ID, "a new number, never one the previous list used")

	todos.Forget("conv-1")
	assert.Nil(t, todos.List("conv-1"))
}

func TestTodoWriteRefusals(t *testing.T) {
	long := make([]byte, agent.MaxTodoContent+1)
	for i := range long {
		long[i] = 'a'
	}
	for _, tc := range []struct {
		name string
		call llmtoolkit.Call
		want string
	}{
		{"two in progress", todoCall(item("a", "in_progress"), item("b", "in_progress")), "2 items are in_progress; mark at most one"},
		{"bad status", todoCall(item("a", "done")), "status"},
		{"empty content", todoCall(item("  ", "pending")), "item 1 has no content"},
		{"duplicate ids", todoCall(map[string]any{"id": "x", "content": "a", "status": "pending"}, map[string]any{"id": "x", "content": "b", "status": "pending"}), `the id "x" is used twice`},
		{"too long", todoCall(item(string(long), "pending")), "length must be <= 2000"},
		{"not a list", llmtoolkit.Call{Name: agent.TodoToolName, Arguments: map[string]any{"todos": "a"}}, "array"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			todos := agent.NewTodos(agent.TodoConfig{})
			res := llmtoolkit.Execute(session("c"), todos, tc.call)
			require.True(t, res.IsError)
			assert.Contains(t, res.Content, tc.want)
			assert.Nil(t, todos.List("c"), "a refused list changes nothing")
		})
	}
	t.Run("no session", func(t *testing.T) {
		todos := agent.NewTodos(agent.TodoConfig{})
		res := llmtoolkit.Execute(context.Background(), todos, todoCall(item("a", "pending")))
		require.True(t, res.IsError)
		assert.ErrorIs(t, res.Err, agent.ErrNoSession)
	})
	t.Run("custom key", func(t *testing.T) {
		todos := agent.NewTodos(agent.TodoConfig{Key: func(ctx context.Context) (string, bool) { return "fixed", true }})
		res := llmtoolkit.Execute(context.Background(), todos, todoCall(item("a", "pending")))
		require.False(t, res.IsError, res.Content)
		assert.Len(t, todos.List("fixed"), 1)
	})
}

// TestTodoListsOf32ConcurrentSessions writes from 32 sessions at once, many
// times each: every session ends with its own last list, never another's.
func TestTodoListsOf32ConcurrentSessions(t *testing.T) {
	const sessions, rounds = 32, 50
	var mu sync.Mutex
	notified := map[string]int{}
	todos := agent.NewTodos(agent.TodoConfig{OnChange: func(ctx context.Context, key string, list []agent.Todo) {
		assert.Equal(t, llmtoolkit.ScopeFrom(ctx).Session["conversation_id"], key)
		for _, it := range list {
			assert.Contains(t, it.Content, key+" ", "a notification carries only its session's items")
		}
		mu.Lock()
		notified[key]++
		mu.Unlock()
	}})
	var wg sync.WaitGroup
	for s := range sessions {
		wg.Go(func() {
			key := fmt.Sprintf("conv-%02d", s)
			ctx := session(key)
			for r := range rounds {
				res := llmtoolkit.Execute(ctx, todos, todoCall(
					item(fmt.Sprintf("%s step %d", key, r), "in_progress"),
					item(fmt.Sprintf("%s next", key), "pending"),
				))
				if !assert.False(t, res.IsError, res.Content) {
					return
				}
				payload := res.Display.Payload.(agent.TodosPayload)
				assert.Equal(t, fmt.Sprintf("%s step %d", key, r), payload.Todos[0].Content)
			}
		})
	}
	wg.Wait()
	for s := range sessions {
		key := fmt.Sprintf("conv-%02d", s)
		got := todos.List(key)
		require.Len(t, got, 2)
		assert.Equal(t, fmt.Sprintf("%s step %d", key, rounds-1), got[0].Content)
		assert.Equal(t, key+" next", got[1].Content)
		assert.Equal(t, "2", got[1].ID, "the unchanged item kept its id through every rewrite")
		assert.Equal(t, rounds, notified[key])
	}
}

// TestTodoIDsAreBounded: an id is bounded like content (issue 23, row 12),
// both through Execute (the schema) and when the tool is called directly.
func TestTodoIDsAreBounded(t *testing.T) {
	long := strings.Repeat("x", 1<<20)
	items := make([]map[string]any, 100)
	for i := range items {
		items[i] = map[string]any{"id": fmt.Sprintf("%s-%d", long, i), "content": fmt.Sprint("step ", i), "status": "pending"}
	}
	for _, tc := range []struct {
		name string
		call func(context.Context, *agent.Todos, llmtoolkit.Call) (string, error)
	}{
		{"through Execute", func(ctx context.Context, todos *agent.Todos, call llmtoolkit.Call) (string, error) {
			res := llmtoolkit.Execute(ctx, todos, call)
			return res.Content, res.Err
		}},
		{"direct", func(ctx context.Context, todos *agent.Todos, call llmtoolkit.Call) (string, error) {
			return todos.Resolve(ctx, call)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			todos := agent.NewTodos(agent.TodoConfig{})
			ctx := session("conv-ids")
			out, err := tc.call(ctx, todos, todoCall(items...))
			require.Error(t, err)
			assert.NotContains(t, out, long)
			assert.Empty(t, todos.List("conv-ids"))
			_, err = tc.call(ctx, todos, todoCall(map[string]any{"id": strings.Repeat("y", agent.MaxTodoID+1), "content": "a", "status": "pending"}))
			require.Error(t, err)
			assert.Contains(t, err.Error(), fmt.Sprint(agent.MaxTodoID))
			_, err = tc.call(ctx, todos, todoCall(map[string]any{"id": strings.Repeat("y", agent.MaxTodoID), "content": "a", "status": "pending"}))
			require.NoError(t, err)
		})
	}
}
