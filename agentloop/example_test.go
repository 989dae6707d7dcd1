package agentloop_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// A model stand-in: it asks for the shout tool once, then answers with the
// tool's output. A real SendFunc would call a provider (see package provider).
func exampleModel(_ context.Context, messages []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
	last := messages[len(messages)-1]
	if last.Role == agentloop.RoleTool {
		return agentloop.Response{Content: "The tool says: " + last.Content, StopReason: "stop"}, nil
	}
	call := llmtoolkit.Call{ID: "call_1", Name: tools[0].Name, Arguments: map[string]any{"text": last.Content}}
	return agentloop.Response{ToolCalls: []llmtoolkit.Call{call}, StopReason: "tool_calls"}, nil
}

func ExampleRun() {
	shout := llmtoolkit.MustTool("shout", "Returns the text in capital letters.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	})
	tools := (&llmtoolkittest.Fake{}).Add(shout, func(_ context.Context, call llmtoolkit.Call) (string, error) {
		return strings.ToUpper(call.Arguments["text"].(string)), nil
	})

	resp, history, err := agentloop.Run(context.Background(),
		[]agentloop.Message{agentloop.UserMessage("hello, tools")},
		exampleModel,
		agentloop.Options{
			Resolver: tools,
			Logger:   slog.New(slog.DiscardHandler),
			OnEvent: func(e agentloop.Event) {
				if e.Kind == agentloop.EventToolCall {
					fmt.Printf("running %s(%v)\n", e.Call.Name, e.Call.Arguments)
				}
			},
		})
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(resp.Content)
	for _, m := range history {
		fmt.Printf("%s: %q %d call(s)\n", m.Role, m.Content, len(m.ToolCalls))
	}
	// Output:
	// running shout(map[text:hello, tools])
	// The tool says: HELLO, TOOLS
	// user: "hello, tools" 0 call(s)
	// assistant: "" 1 call(s)
	// tool: "HELLO, TOOLS" 0 call(s)
	// assistant: "The tool says: HELLO, TOOLS" 0 call(s)
}
