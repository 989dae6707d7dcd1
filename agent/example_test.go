package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// exampleTB lets a ScriptedModel run outside a test.
type exampleTB struct{}

func (exampleTB) Helper()                           {}
func (exampleTB) Errorf(format string, args ...any) { fmt.Printf(format+"\n", args...) }

func ExamplePermissions_Guard() {
	perms, err := agent.New(agent.Config{
		Mode:  agent.ModeAcceptEdits,
		Deny:  []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `(^|[;&|]\s*)rm\s`}},
		Allow: []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^go (test|vet) [./a-z]*$`}},
		CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			return agent.Deny("the user declined " + call.Arguments["command"].(string))
		},
	})
	if err != nil {
		panic(err)
	}
	tools := perms.Guard(workspace())
	for _, cmd := range []string{"go test ./...", "rm -rf build", "make"} {
		res := llmtoolkit.Execute(context.Background(), tools, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": cmd}})
		fmt.Println(res.Content)
	}
	// Output:
	// bash ran
	// permission denied: tool "bash" was not run: the host's rule bash(command regexp "(^|[;&|]\\s*)rm\\s") forbids this call
	// permission denied: tool "bash" was not run: the user declined make
}

func ExamplePlanMode() {
	perms, _ := agent.New(agent.Config{Mode: agent.ModePlan})
	approve := func(_ context.Context, plan string) agent.PlanDecision {
		fmt.Println("plan:", plan)
		return agent.PlanDecision{Approved: true, Mode: agent.ModeAcceptEdits}
	}
	tools := perms.Guard(llmtoolkit.Compose(workspace(), agent.PlanMode(perms, approve)))
	model := lt.NewScriptedModel(exampleTB{},
		lt.CallTools(llmtoolkit.Call{Name: agent.PlanToolName, Arguments: map[string]any{"plan": "1. fix a.go"}}),
		lt.Reply("ready"))
	_, _, err := agentloop.Run(context.Background(), []agentloop.Message{agentloop.UserMessage("fix a.go")}, model.Send,
		agentloop.Options{Resolver: tools, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		panic(err)
	}
	for i, req := range model.Requests() {
		fmt.Printf("turn %d offered: %s\n", i+1, strings.Join(toolNames(req.Tools), ", "))
	}
	// Output:
	// plan: 1. fix a.go
	// turn 1 offered: read_file, exit_plan_mode
	// turn 2 offered: read_file, write_file, bash
}

func ExampleNewTodos() {
	todos := agent.NewTodos(agent.TodoConfig{OnChange: func(_ context.Context, key string, list []agent.Todo) {
		for _, it := range list {
			fmt.Printf("%s: [%s] %s %s\n", key, it.ID, it.Status, it.Content)
		}
	}})
	ctx := llmtoolkit.WithScope(context.Background(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"conversation_id": "conv-1"} })
	res := llmtoolkit.Execute(ctx, todos, llmtoolkit.Call{Name: agent.TodoToolName, Arguments: map[string]any{"todos": []any{
		map[string]any{"content": "find the bug", "status": "in_progress"},
		map[string]any{"content": "fix it", "status": "pending"},
	}}})
	fmt.Println(res.Content)
	fmt.Println(len(todos.List("conv-1")), "items kept for conv-1")
	// Output:
	// conv-1: [1] in_progress find the bug
	// conv-1: [2] pending fix it
	// Todo list updated: 2 items (0 completed, 1 in progress, 1 pending). In progress: find the bug
	// 2 items kept for conv-1
}

func ExampleSpawnAgent() {
	sub := lt.NewScriptedModel(exampleTB{},
		lt.CallTools(llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.go"}}),
		lt.Reply("a.go divides by zero on line 3"))
	spawn, err := agent.SpawnAgent(agent.SubAgentConfig{
		Model: sub.Send, Tools: workspace(), Instructions: "You find bugs. Answer in one line.",
		MaxIterations: 4, NewID: func() string { return "sub-1" }, Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		panic(err)
	}
	res := llmtoolkit.Execute(context.Background(), spawn, llmtoolkit.Call{Name: agent.SpawnToolName, Arguments: map[string]any{"task": "Find the bug in a.go."}})
	p := res.Display.Payload.(agent.SubAgentPayload)
	fmt.Println(res.Content)
	fmt.Printf("%s: %d iterations, %d tool calls\n", p.ID, p.Iterations, p.ToolCalls)
	// Output:
	// a.go divides by zero on line 3
	// sub-1: 2 iterations, 1 tool calls
}
