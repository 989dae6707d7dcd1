package agentresolver_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
)

// greeter is a handler value: a definition and an Execute method.
type greeter struct{}

func (greeter) Definition() llmtoolkit.Tool {
	return llmtoolkit.MustTool("greet", "Greet someone by name.", map[string]any{
		"type": "object",
		"properties": map[string]any{
			"name": map[string]any{"type": "string", "description": "who to greet"},
		},
		"required": []any{"name"},
	})
}

func (greeter) Execute(ctx context.Context, args map[string]any) (string, error) {
	greeting := "Hello"
	if s := llmtoolkit.ScopeFrom(ctx).Session; s != nil && s["lang"] == "fr" {
		greeting = "Bonjour"
	}
	return fmt.Sprintf("%s, %s!", greeting, args["name"]), nil
}

func ExampleNew() {
	r, err := agentresolver.New(greeter{})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	out, _ := r.Resolve(ctx, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "Ada"}})
	fmt.Println(out)

	// The session of the turn reaches the handler.
	out, _ = r.ResolveWith(ctx, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "Ada"}}, map[string]any{"lang": "fr"})
	fmt.Println(out)

	// Arguments are validated before the handler runs.
	_, err = r.Resolve(ctx, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": 42}})
	fmt.Println(err)
	// Output:
	// Hello, Ada!
	// Bonjour, Ada!
	// invalid arguments for tool "greet": /name: expected string, but got number
}

// weatherArgs are the arguments of a typed tool: the schema is derived from
// the struct's tags.
type weatherArgs struct {
	City  string `json:"city" jsonschema:"the city, e.g. Paris"`
	Units string `json:"units,omitempty" jsonschema:"temperature units" jsonschema_enum:"celsius,fahrenheit"`
	Days  int    `json:"days,omitempty" jsonschema:"days of forecast, 1 to 7"`
}

func weather(_ context.Context, a weatherArgs) (string, error) {
	if a.Units == "" {
		a.Units = "celsius"
	}
	if a.Days == 0 {
		a.Days = 1
	}
	return fmt.Sprintf("%d-day forecast for %s in %s: sunny", a.Days, a.City, a.Units), nil
}

func ExampleFunc() {
	r, err := agentresolver.New(
		agentresolver.Func("weather", "Forecast the weather of a city.", weather, agentresolver.WithReadOnly()),
	)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()

	tool := r.Tools()[0]
	fmt.Println(tool.Parameters["required"], tool.Annotations.ReadOnly)

	out, _ := r.Resolve(ctx, llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"city": "Paris", "days": 3.0}})
	fmt.Println(out)

	_, err = r.Resolve(ctx, llmtoolkit.Call{Name: "weather", Arguments: map[string]any{"units": "kelvin"}})
	fmt.Println(err)
	// Output:
	// [city] true
	// 3-day forecast for Paris in celsius: sunny
	// invalid arguments for tool "weather": /city: missing required property (add it); /units: value must be one of "celsius", "fahrenheit"
}

// kvStore is a stateful tool: the Go way to keep state between calls is a
// handler value that holds it behind its own mutex, since calls may run
// concurrently.
type kvStore struct {
	mu   sync.Mutex
	data map[string]string
}

type kvArgs struct {
	Op    string `json:"op" jsonschema:"what to do" jsonschema_enum:"get,set,list"`
	Key   string `json:"key,omitempty" jsonschema:"the key, for get and set"`
	Value string `json:"value,omitempty" jsonschema:"the value, for set"`
}

// Handler builds the store's tool from its method, so the state stays in
// the value.
func (s *kvStore) Handler() agentresolver.Handler {
	return agentresolver.Func("memory", "Remember and recall short notes by key.", s.run, agentresolver.WithIdempotent())
}

func (s *kvStore) run(_ context.Context, a kvArgs) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch a.Op {
	case "set":
		if s.data == nil {
			s.data = map[string]string{}
		}
		s.data[a.Key] = a.Value
		return "ok", nil
	case "get":
		v, ok := s.data[a.Key]
		if !ok {
			return "", fmt.Errorf("no note under %q; list the keys with op=list", a.Key)
		}
		return v, nil
	default: // list
		return strings.Join(slices.Sorted(maps.Keys(s.data)), ", "), nil
	}
}

func Example_stateful() {
	store := &kvStore{}
	r, err := agentresolver.New(store.Handler())
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	call := func(args map[string]any) {
		out, err := r.Resolve(ctx, llmtoolkit.Call{Name: "memory", Arguments: args})
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(out)
	}
	call(map[string]any{"op": "set", "key": "lang", "value": "Go"})
	call(map[string]any{"op": "set", "key": "editor", "value": "vim"})
	call(map[string]any{"op": "get", "key": "lang"})
	call(map[string]any{"op": "list"})
	call(map[string]any{"op": "get", "key": "os"})
	// Output:
	// ok
	// ok
	// Go
	// editor, lang
	// error: no note under "os"; list the keys with op=list
}

func ExampleWithOptions() {
	r, err := agentresolver.New(agentresolver.WithOptions(greeter{},
		agentresolver.WithReadOnly(),
		agentresolver.WithSensitiveFields("name"),
	))
	if err != nil {
		panic(err)
	}
	tool, _ := r.LookupTool("greet")
	fmt.Println(tool.SensitiveFields, len(llmtoolkit.ReadOnly(r).Tools()))
	// Output:
	// [name] 1
}
