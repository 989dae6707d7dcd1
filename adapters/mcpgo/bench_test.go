package mcpgo_test

import (
	"context"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/require"
)

// One echo call: directly through llmtoolkit.Execute, through the adapter's
// handler (what mcp-go's server runs), and through mcp-go's in-process
// client and server (JSON both ways).
func BenchmarkCall(b *testing.B) {
	ctx := context.Background()
	r := echoTools()
	args := map[string]any{"text": "hi"}

	b.Run("direct Execute", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "echo", Arguments: args})
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	})

	b.Run("adapter handler", func(b *testing.B) {
		tools, err := mcpgo.ServerTools(r)
		require.NoError(b, err)
		h := tools[0].Handler
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = args
		b.ReportAllocs()
		for b.Loop() {
			res, err := h(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})

	b.Run("in-process client", func(b *testing.B) {
		_, _, c := serve(b, r)
		req := mcp.CallToolRequest{}
		req.Params.Name = "echo"
		req.Params.Arguments = args
		b.ReportAllocs()
		for b.Loop() {
			res, err := c.CallTool(ctx, req)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	})

	b.Run("Resolver over in-process client", func(b *testing.B) {
		_, _, c := serve(b, r)
		back, err := mcpgo.NewResolver(ctx, c)
		require.NoError(b, err)
		b.ReportAllocs()
		for b.Loop() {
			res := llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "echo", Arguments: args})
			if res.IsError {
				b.Fatal(res.Content)
			}
		}
	})
}
