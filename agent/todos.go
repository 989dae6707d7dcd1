package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
)

// TodoToolName is the name of the todo tool ([Todos]).
const TodoToolName = "todo_write"

// Status is a todo item's state.
type Status string

// The statuses of a todo item.
const (
	StatusPending    Status = "pending"
	StatusInProgress Status = "in_progress"
	StatusCompleted  Status = "completed"
)

// Todo is one item of an agent's todo list.
type Todo struct {
	// ID identifies the item across rewrites of the list: the model's own,
	// or given by the store (kept when the model rewrites an item with the
	// same content and no id).
	ID string `json:"id"`
	// Content says what to do.
	Content string `json:"content"`
	// Status is pending, in_progress or completed.
	Status Status `json:"status"`
}

// Limits of a todo list.
const (
	MaxTodos       = 100
	MaxTodoContent = 2000 // bytes
	MaxTodoID      = 100  // bytes
)

// ErrNoSession is wrapped by the error of a todo_write call whose context
// names no session (see [TodoConfig.Key]).
var ErrNoSession = errors.New("agent: no session to keep the todo list in")

// TodoConfig configures [NewTodos].
type TodoConfig struct {
	// Key names the session a call belongs to: one list is kept per key.
	// Nil means the "conversation_id" string of the session map
	// ([llmtoolkit.Scope].Session, as trace reads it); a call without one is
	// refused with [ErrNoSession] rather than mixed with another session's.
	Key func(ctx context.Context) (string, bool)
	// OnChange, when set, is told of each new list (the seed's
	// todo_writer), after it is stored. It is called from the tool call.
	OnChange func(ctx context.Context, key string, todos []Todo)
}

// Todos is the todo_write tool and the per-session store behind it: the
// model replaces the whole list with each call; the host reads it back with
// [Todos.List] and is told of each change through TodoConfig.OnChange and a
// "todos" Display ([TodosPayload]). It is safe for concurrent use; the
// lists of different sessions never mix.
type Todos struct {
	cfg   TodoConfig
	mu    sync.Mutex
	lists map[string]*todoList
}

type todoList struct {
	items  []Todo
	nextID int
}

var todoTool = llmtoolkit.MustTool(TodoToolName,
	"Replaces your todo list with the given items: use it to plan multi-step work and to show progress. "+
		"Send the whole list every time; keep each item's id; mark one item in_progress at a time and items completed as soon as they are done.",
	map[string]any{
		"type": "object",
		"properties": map[string]any{
			"todos": map[string]any{
				"type":     "array",
				"maxItems": MaxTodos,
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":      map[string]any{"type": "string", "maxLength": MaxTodoID, "description": "The item's id: keep it across calls; omit it for a new item."},
						"content": map[string]any{"type": "string", "minLength": 1, "maxLength": MaxTodoContent},
						"status":  map[string]any{"type": "string", "enum": []any{"pending", "in_progress", "completed"}},
					},
					"required":             []any{"content", "status"},
					"additionalProperties": false,
				},
			},
		},
		"required":             []any{"todos"},
		"additionalProperties": false,
	})

// NewTodos returns an empty store and its tool.
func NewTodos(cfg TodoConfig) *Todos {
	return &Todos{cfg: cfg, lists: map[string]*todoList{}}
}

// Tools lists todo_write.
func (t *Todos) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{todoTool} }

// LookupTool finds todo_write.
func (t *Todos) LookupTool(name string) (llmtoolkit.Tool, bool) {
	if name == TodoToolName {
		return todoTool, true
	}
	return llmtoolkit.Tool{}, false
}

// List returns a copy of the list of the session key (nil if none).
func (t *Todos) List(key string) []Todo {
	t.mu.Lock()
	defer t.mu.Unlock()
	if l := t.lists[key]; l != nil {
		return slices.Clone(l.items)
	}
	return nil
}

// ListFrom returns the list of the session ctx names.
func (t *Todos) ListFrom(ctx context.Context) []Todo {
	key, ok := t.key(ctx)
	if !ok {
		return nil
	}
	return t.List(key)
}

// Forget drops the list of the session key (when the session ends).
func (t *Todos) Forget(key string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.lists, key)
}

func (t *Todos) key(ctx context.Context) (string, bool) {
	if t.cfg.Key != nil {
		return t.cfg.Key(ctx)
	}
	id, ok := llmtoolkit.ScopeFrom(ctx).Session["conversation_id"].(string)
	return id, ok && id != ""
}

// Resolve replaces the session's list and confirms it.
func (t *Todos) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if call.Name != TodoToolName {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	key, ok := t.key(ctx)
	if !ok {
		return "", fmt.Errorf("%w: the host must bind one (a conversation_id in the session map, or TodoConfig.Key)", ErrNoSession)
	}
	items, err := parseTodos(call.Arguments["todos"])
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	l := t.lists[key]
	if l == nil {
		l = &todoList{}
		t.lists[key] = l
	}
	if err := l.assignIDs(items); err != nil {
		t.mu.Unlock()
		return "", err
	}
	l.items = items
	t.mu.Unlock()

	out := slices.Clone(items)
	if t.cfg.OnChange != nil {
		t.cfg.OnChange(ctx, key, slices.Clone(items))
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayTodos, Payload: TodosPayload{Todos: out}})
	return summary(items), nil
}

// parseTodos reads and checks the todos argument.
func parseTodos(v any) ([]Todo, error) {
	raw, ok := v.([]any)
	if !ok {
		return nil, errors.New(`"todos" must be an array of {id, content, status}`)
	}
	if len(raw) > MaxTodos {
		return nil, fmt.Errorf("the list has %d items; keep it under %d", len(raw), MaxTodos)
	}
	items := make([]Todo, 0, len(raw))
	inProgress := 0
	for i, r := range raw {
		m, _ := r.(map[string]any)
		id, _ := m["id"].(string)
		content, _ := m["content"].(string)
		status, _ := m["status"].(string)
		content = strings.TrimSpace(content)
		switch {
		case len(id) > MaxTodoID:
			return nil, fmt.Errorf("item %d has an id of %d bytes; keep ids under %d (or omit them: the list gives each new item one)", i+1, len(id), MaxTodoID)
		case content == "":
			return nil, fmt.Errorf("item %d has no content", i+1)
		case len(content) > MaxTodoContent:
			return nil, fmt.Errorf("item %d is %d bytes long; keep items under %d", i+1, len(content), MaxTodoContent)
		}
		switch Status(status) {
		case StatusInProgress:
			inProgress++
		case StatusPending, StatusCompleted:
		default:
			return nil, fmt.Errorf("item %d has status %q; use pending, in_progress or completed", i+1, status)
		}
		items = append(items, Todo{ID: strings.TrimSpace(id), Content: content, Status: Status(status)})
	}
	if inProgress > 1 {
		return nil, fmt.Errorf("%d items are in_progress; mark at most one in_progress at a time", inProgress)
	}
	return items, nil
}

// assignIDs checks the model's ids and gives one to each new item: an item
// without an id keeps the id of the previous list's item with the same
// content, else the next number not used by either list.
func (l *todoList) assignIDs(items []Todo) error {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		if it.ID == "" {
			continue
		}
		if seen[it.ID] {
			return fmt.Errorf("the id %q is used twice; give each item its own id", it.ID)
		}
		seen[it.ID] = true
	}
	previous := make(map[string]string, len(l.items))
	taken := make(map[string]bool, len(l.items))
	for _, it := range l.items {
		taken[it.ID] = true
		if _, dup := previous[it.Content]; !dup {
			previous[it.Content] = it.ID
		}
	}
	for i := range items {
		if items[i].ID != "" {
			continue
		}
		if id, ok := previous[items[i].Content]; ok && !seen[id] {
			items[i].ID = id
			seen[id] = true
			continue
		}
		for {
			l.nextID++
			id := strconv.Itoa(l.nextID)
			if !seen[id] && !taken[id] {
				items[i].ID, seen[id] = id, true
				break
			}
		}
	}
	return nil
}

// summary is the short confirmation the model reads.
func summary(items []Todo) string {
	var pending, doing, done int
	current := ""
	for _, it := range items {
		switch it.Status {
		case StatusPending:
			pending++
		case StatusInProgress:
			doing++
			current = it.Content
		case StatusCompleted:
			done++
		}
	}
	s := fmt.Sprintf("Todo list updated: %d items (%d completed, %d in progress, %d pending).", len(items), done, doing, pending)
	if current != "" {
		s += " In progress: " + current
	}
	return s
}
