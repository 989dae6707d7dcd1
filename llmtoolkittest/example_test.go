package llmtoolkittest_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

func ExampleFake() {
	fake := llmtoolkittest.NewFake(map[string]string{"read_file": "package main"})
	res := llmtoolkit.Execute(context.Background(), fake, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "main.go"}})
	fmt.Println(res.Content)
	fmt.Println(len(fake.CallsTo("read_file")), fake.Calls()[0].Arguments["path"])
	// Output:
	// package main
	// 1 main.go
}

func ExampleNewScriptedModel() {
	// In a test, pass the test's own t; outside one, nil.
	tools := llmtoolkittest.NewFake(map[string]string{"clock": "12:00"})
	model := llmtoolkittest.NewScriptedModel(nil,
		llmtoolkittest.CallTools(llmtoolkittest.Call("clock", nil)),
		llmtoolkittest.Reply("It is noon."),
	)
	final, history, err := agentloop.Run(context.Background(),
		[]agentloop.Message{agentloop.UserMessage("What time is it?")}, model.Send,
		agentloop.Options{Resolver: tools, Logger: slog.New(slog.DiscardHandler)})
	fmt.Println(final.Content, err)
	fmt.Println(len(history), "messages;", len(model.Requests()), "model calls")
	// Output:
	// It is noon. <nil>
	// 4 messages; 2 model calls
}
