package agentloop_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// A long coding run under a context budget: old tool results are cleared
// past 60% of the budget (the latest 4 kept), big results are spilled to
// files the code tools read, and the oldest turns are compacted by the
// host's summarizer past 85%.
func Example_contextBudget() {
	root, _ := os.MkdirTemp("", "workspace")
	defer os.RemoveAll(root)
	_ = os.WriteFile(root+"/big.log", []byte(strings.Repeat("a line of the build log\n", 4000)), 0o644)
	tools, _ := codetools.New(root)
	defer tools.Close()

	// A model that asks for the whole log, then answers.
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		if len(msgs) == 1 {
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "c1", Name: "show_log"}}}, nil
		}
		return agentloop.Response{Content: "done"}, nil
	}
	logs := (&lt.Fake{}).Handle("show_log", func(context.Context, llmtoolkit.Call) (string, error) {
		b, err := os.ReadFile(root + "/big.log")
		return string(b), err
	})
	summarize := func(_ context.Context, span []agentloop.Message) (string, error) {
		return fmt.Sprintf("%d earlier messages: files read, commands run, failures.", len(span)), nil
	}
	_, history, err := agentloop.Run(context.Background(), []agentloop.Message{agentloop.UserMessage("Fix the build.")}, send, agentloop.Options{
		Resolver:      llmtoolkit.Compose(tools, logs),
		ContextBudget: 100_000,
		ContextPolicy: agentloop.ContextPolicy{
			Summarize:  summarize,
			SpillBytes: 8 << 10,
			SpillRoot:  root, // the spill files go to root/.llmtoolkit/spill/RUN/, removed when Run returns
		},
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventResultSpilled {
				fmt.Println("spilled to", e.Context.Path[:len(agentloop.DefaultSpillDir)], "...")
			}
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	result := history[2].Content
	fmt.Println(len(result) < 9<<10, strings.Contains(result, "read it with read_file (offset, limit) or search it with grep"))
	// Output:
	// spilled to .llmtoolkit/spill ...
	// true true
}
