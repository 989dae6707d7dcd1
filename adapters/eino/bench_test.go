package eino_test

import (
	"context"
	"testing"

	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/compose"
	"github.com/cloudwego/eino/schema"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"

	eino "github.com/llmtoolkit/llmtoolkit/adapters/eino"
)

const benchArgs = `{"text":"hello"}`

// BenchmarkCall compares one call of a cheap tool made directly
// (ParseCall + llmtoolkit.Execute), through the adapter's InvokableRun, and
// through eino's ToolsNode holding the adapted tool.
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	r := benchResolver(b)
	tools, err := eino.Tools(ctx, r)
	require.NoError(b, err)
	inv := tools[0].(tool.InvokableTool)

	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			call, err := llmtoolkit.ParseCall("c1", "echo", benchArgs)
			if err != nil {
				b.Fatal(err)
			}
			if res := llmtoolkit.Execute(ctx, r, call); res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
	b.Run("adapter", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := inv.InvokableRun(ctx, benchArgs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("toolsnode", func(b *testing.B) {
		node, err := compose.NewToolNode(ctx, &compose.ToolsNodeConfig{Tools: tools})
		require.NoError(b, err)
		msg := schema.AssistantMessage("", []schema.ToolCall{call("c1", "echo", benchArgs)})
		b.ReportAllocs()
		for b.Loop() {
			if _, err := node.Invoke(ctx, msg); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchResolver(b *testing.B) llmtoolkit.Resolver {
	b.Helper()
	tl, err := llmtoolkit.NewTool("echo", "Echo the text.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	})
	require.NoError(b, err)
	return staticResolver{tl}
}
