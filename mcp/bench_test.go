package mcp

import (
	"context"
	"log/slog"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkCallInMemory measures one tools/call round trip through this
// package's client and server over the SDK's in-memory transport.
func BenchmarkCallInMemory(b *testing.B) {
	c := ourClient(b, newFixture())
	ctx := context.Background()
	call := llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	for b.Loop() {
		if res := llmtoolkit.Execute(ctx, c, call); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkToolHandler measures the server's handler alone: argument
// parsing, validation, Execute and the result mapping.
func BenchmarkToolHandler(b *testing.B) {
	h := toolHandler(newFixture(), "echo", slog.New(slog.DiscardHandler))
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "echo", Arguments: []byte(`{"text":"hello","times":2}`)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := h(ctx, req); res.IsError {
			b.Fatal(res.Content)
		}
	}
}
