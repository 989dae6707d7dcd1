package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// FuzzTodoWrite sends any JSON as the todos argument straight to Resolve
// (a tool may be called without Execute's validation) over a list kept
// between inputs: it never panics, and every list it keeps has unique,
// non-empty ids and at most one item in progress.
func FuzzTodoWrite(f *testing.F) {
	f.Add(`[{"content":"a","status":"pending"},{"id":"1","content":"b","status":"in_progress"}]`)
	f.Add(`[{"id":"2","content":"a","status":"completed"},{"content":"a","status":"pending"}]`)
	f.Add(`[{"id":"","content":" ","status":"pending"}]`)
	f.Add(`{"content":"a"}`)
	f.Add(`[null, 3, "x"]`)
	todos := agent.NewTodos(agent.TodoConfig{})
	ctx := session("fuzz")
	f.Fuzz(func(t *testing.T, raw string) {
		var v any
		if json.Unmarshal([]byte(raw), &v) != nil {
			return
		}
		_, _ = todos.Resolve(ctx, llmtoolkit.Call{Name: agent.TodoToolName, Arguments: map[string]any{"todos": v}})
		seen := map[string]bool{}
		doing := 0
		for _, it := range todos.List("fuzz") {
			if it.ID == "" || seen[it.ID] {
				t.Fatalf("bad or repeated id %q in %v", it.ID, todos.List("fuzz"))
			}
			seen[it.ID] = true
			if it.Status == agent.StatusInProgress {
				doing++
			}
		}
		if doing > 1 {
			t.Fatalf("%d items in progress", doing)
		}
	})
}
