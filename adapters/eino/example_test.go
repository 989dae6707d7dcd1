package eino_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/flow/agent/react"
	"github.com/cloudwego/eino/schema"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

// scriptedModel is an eino ToolCallingChatModel that answers from a script,
// one assistant message per turn, and prints each tool result it is sent.
type scriptedModel struct {
	script []*schema.Message
}

func (m *scriptedModel) Generate(_ context.Context, input []*schema.Message, _ ...model.Option) (*schema.Message, error) {
	turn := 0
	for _, msg := range input {
		if msg.Role == schema.Assistant {
			turn++
		}
	}
	if last := input[len(input)-1]; last.Role == schema.Tool {
		fmt.Printf("model reads (%s): %s\n", last.ToolCallID, strings.TrimSpace(last.Content))
	}
	if turn >= len(m.script) {
		return schema.AssistantMessage("the script is over", nil), nil
	}
	return m.script[turn], nil
}

func (m *scriptedModel) Stream(ctx context.Context, input []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	msg, err := m.Generate(ctx, input, opts...)
	if err != nil {
		return nil, err
	}
	return schema.StreamReaderFromArray([]*schema.Message{msg}), nil
}

func (m *scriptedModel) WithTools([]*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	return m, nil
}

func toolCall(id, name, args string) []schema.ToolCall {
	return []schema.ToolCall{{ID: id, Type: "function", Function: schema.FunctionCall{Name: name, Arguments: args}}}
}

// Example runs eino's own ReAct agent with llmtoolkit's code tools on a
// folder, driven by a scripted model: a write, a failed read (a result the
// model reads, not an aborted run), an edit and a read.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "eino-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	ct, err := codetools.New(dir)
	if err != nil {
		panic(err)
	}
	tools, err := eino.Tools(ctx, ct, eino.WithDisplay(func(_ context.Context, id string, d llmtoolkit.Display) {
		fmt.Printf("host shows (%s): a %q display\n", id, d.Kind)
	}))
	if err != nil {
		panic(err)
	}
	m := &scriptedModel{script: []*schema.Message{
		schema.AssistantMessage("", toolCall("call-1", "write_file", `{"path":"notes.txt","content":"hello from eino\n"}`)),
		schema.AssistantMessage("", toolCall("call-2", "read_file", `{"path":"missing.txt"}`)),
		schema.AssistantMessage("", toolCall("call-3", "edit_file", `{"path":"notes.txt","oldText":"hello","newText":"goodbye"}`)),
		schema.AssistantMessage("", toolCall("call-4", "read_file", `{"path":"notes.txt"}`)),
		schema.AssistantMessage("notes.txt now says goodbye", nil),
	}}
	agent, err := react.NewAgent(ctx, &react.AgentConfig{
		ToolCallingModel: m,
		ToolsConfig:      compose.ToolsNodeConfig{Tools: tools, UnknownToolsHandler: eino.UnknownTools(ct)},
	})
	if err != nil {
		panic(err)
	}
	answer, err := agent.Generate(ctx, []*schema.Message{schema.UserMessage("Change hello to goodbye in notes.txt.")})
	if err != nil {
		panic(err)
	}
	fmt.Println("agent:", answer.Content)
	data, _ := os.ReadFile(filepath.Join(dir, "notes.txt"))
	fmt.Printf("on disk: %q\n", data)
	// Output:
	// model reads (call-1): Wrote 16 bytes to notes.txt
	// model reads (call-2): file not found: missing.txt
	// host shows (call-3): a "diff" display
	// model reads (call-3): Successfully replaced text in notes.txt.
	//
	// -1 hello from eino
	// +1 goodbye from eino
	// host shows (call-4): a "file" display
	// model reads (call-4): goodbye from eino
	// agent: notes.txt now says goodbye
	// on disk: "goodbye from eino\n"
}
