package llmtoolkit_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentresolver"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// shouter is a minimal Resolver with one tool.
type shouter struct{ tool llmtoolkit.Tool }

func newShouter() *shouter {
	return &shouter{tool: llmtoolkit.MustTool("shout", "Returns the text in capital letters.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string", "description": "Text to shout."}},
		"required":   []any{"text"},
	})}
}

func (s *shouter) Tools() []llmtoolkit.Tool { return []llmtoolkit.Tool{s.tool} }

func (s *shouter) Resolve(_ context.Context, call llmtoolkit.Call) (string, error) {
	if call.Name != "shout" {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	return strings.ToUpper(call.Arguments["text"].(string)), nil
}

func ExampleNewTool() {
	tool, err := llmtoolkit.NewTool("read_file", "Reads a text file.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"path": map[string]any{"type": "string"}, "offset": map[string]any{"type": "integer"}},
		"required":   []any{"path"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tool.ValidateArguments(map[string]any{"path": "main.go"}))
	fmt.Println(tool.ValidateArguments(map[string]any{"path": "main.go", "offset": "ten"}))
	// Output:
	// <nil>
	// invalid arguments for tool "read_file": /offset: expected integer, but got string
}

func ExampleParseCall() {
	call, err := llmtoolkit.ParseCall("call_1", "shout", `{"text": "hi"}`)
	fmt.Println(call.Arguments["text"], err)
	_, err = llmtoolkit.ParseCall("call_2", "shout", `["hi"]`)
	fmt.Println(err)
	// Output:
	// hi <nil>
	// invalid tool call "shout": arguments must be a JSON object, got an array
}

func ExampleExecute() {
	r := newShouter()
	ctx := context.Background()
	for _, call := range []llmtoolkit.Call{
		{ID: "1", Name: "shout", Arguments: map[string]any{"text": "hello"}},
		{ID: "2", Name: "shout", Arguments: map[string]any{"text": 42}},
		{ID: "3", Name: "whisper"},
	} {
		res := llmtoolkit.Execute(ctx, r, call)
		fmt.Printf("%s error=%v: %s\n", res.ToolCallID, res.IsError, res.Content)
	}
	// Output:
	// 1 error=false: HELLO
	// 2 error=true: invalid arguments for tool "shout": /text: expected string, but got number
	// 3 error=true: unknown tool: "whisper". Available tools: shout
}

func ExampleCompose() {
	fake := llmtoolkittest.NewFake(map[string]string{"shout": "overridden", "time": "12:00"})
	r := llmtoolkit.Compose(newShouter(), fake) // first match wins
	for _, t := range r.Tools() {
		fmt.Println(t.Name)
	}
	res := llmtoolkit.Execute(context.Background(), r, llmtoolkit.Call{Name: "shout", Arguments: map[string]any{"text": "mine"}})
	fmt.Println(res.Content)
	// Output:
	// shout
	// time
	// MINE
}

func ExamplePrepareSession() {
	fake := llmtoolkittest.NewFake(nil).Handle("whoami", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		return fmt.Sprint(llmtoolkit.ScopeFrom(ctx).Session["user"]), nil
	}).Returns("delete_all", "deleted")

	tools, resolve := llmtoolkit.PrepareSession(fake, []string{"whoami"}, map[string]any{"user": "ada"})
	fmt.Println(len(tools), tools[0].Name)
	fmt.Println(llmtoolkit.Execute(context.Background(), resolve, llmtoolkit.Call{Name: "whoami"}).Content)
	fmt.Println(llmtoolkit.Execute(context.Background(), resolve, llmtoolkit.Call{Name: "delete_all"}).Content)
	// Output:
	// 1 whoami
	// ada
	// unknown tool: "delete_all". Available tools: whoami
}

func ExampleHalt() {
	fake := llmtoolkittest.NewFake(nil).Fails("finish", llmtoolkit.Halt("task complete"))
	res := llmtoolkit.Execute(context.Background(), fake, llmtoolkit.Call{Name: "finish"})
	var halt *llmtoolkit.HaltError
	if errors.As(res.Err, &halt) {
		fmt.Println("stop:", halt.Reason)
	}
	// Output:
	// stop: task complete
}

// telling is a wrapper that wants each call's definition: it embeds the
// Resolver it wraps and binds a sink for the definitions found below it.
type telling struct{ llmtoolkit.Resolver }

func (w telling) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	ctx = llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{Definition: func(t llmtoolkit.Tool) {
		fmt.Println("told:", t.Name, t.SensitiveFields)
	}})
	return w.Resolver.Resolve(ctx, call)
}

// A wrapper above a Session learns the definition of a recipe step that
// the Session does not list, with its per-tool facts.
func ExampleListeners_definition() {
	login := llmtoolkit.MustTool("login", "Logs in.", nil)
	login.SensitiveFields = []string{"password"}
	twice := llmtoolkit.MustTool("login_twice", "Logs in twice.", nil)
	twice.Recipe = func(map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "login"}, {Name: "login"}}}
	}
	welcome := func(context.Context, llmtoolkit.Call) (string, error) { return "welcome", nil }
	fake := llmtoolkittest.NewFake(nil).Add(login, welcome).Add(twice, nil)
	_, session := llmtoolkit.PrepareSession(fake, []string{"login_twice"}, nil)

	res := llmtoolkit.Execute(context.Background(), telling{session}, llmtoolkit.Call{Name: "login_twice"})
	fmt.Println(res.Content)
	// Output:
	// told: login [password]
	// told: login [password]
	// welcome
	//
	// welcome
}

// Example is a first program: a tool from a typed Go function, one call as a
// model would make it, and the result the model reads.
func Example() {
	type weatherArgs struct {
		City string `json:"city" jsonschema:"City name, like Lisbon."`
	}
	r, _ := agentresolver.New(agentresolver.Func("weather", "Current weather for a city.",
		func(ctx context.Context, a weatherArgs) (string, error) { return "sunny in " + a.City, nil }))
	ctx := context.Background()
	call, _ := llmtoolkit.ParseCall("call_1", "weather", `{"city": "Lisbon"}`)
	res := llmtoolkit.Execute(ctx, r, call)
	fmt.Println(res.Content)

	call, _ = llmtoolkit.ParseCall("call_2", "weather", `{}`)
	res = llmtoolkit.Execute(ctx, r, call)
	fmt.Println(res.IsError, res.Content)
	// Output:
	// sunny in Lisbon
	// true invalid arguments for tool "weather": /: missing properties: 'city' (add them)
}

// A wrapper below Execute reads what the call showed, once it ran.
func ExampleShownDisplay() {
	tool := llmtoolkit.MustTool("deploy", "Deploys.", map[string]any{"type": "object"})
	tools := llmtoolkit.Indexed(llmtoolkit.ResolverFunc(func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "job", Payload: map[string]any{"jobId": 7, "state": "running"}})
		return "started", nil
	}), []llmtoolkit.Tool{tool})
	reporting := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		out, err := tools.Resolve(ctx, call)
		if d, ok := llmtoolkit.ShownDisplay(ctx); ok {
			fmt.Println("the call showed a", d.Kind, "Display")
		}
		return out, err
	})
	res := llmtoolkit.Execute(context.Background(), llmtoolkit.Indexed(reporting, tools.Tools()), llmtoolkit.Call{Name: "deploy"})
	fmt.Println(res.Content)
	// Output:
	// the call showed a job Display
	// started
}
