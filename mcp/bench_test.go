package mcp

import (
	"context"
	"io"
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
	h := toolHandler(newFixture(), "echo", newStateSigner(nil), slog.New(slog.DiscardHandler))
	req := &sdk.CallToolRequest{Params: &sdk.CallToolParamsRaw{Name: "echo", Arguments: []byte(`{"text":"hello","times":2}`)}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if res, _ := h(ctx, req); res.IsError {
			b.Fatal(res.Content)
		}
	}
}

// BenchmarkCallOverPipe measures one tools/call round trip through the
// SDK's client and [Serve] over newline-delimited JSON on pipes, as
// `llmtoolkit mcp` serves stdio.
func BenchmarkCallOverPipe(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, newFixture(), &sdk.IOTransport{Reader: inR, Writer: outW}) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "bench", Version: "v0"}, nil).
		Connect(ctx, &sdk.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		b.Fatal(err)
	}
	params := &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello"}}
	b.ReportAllocs()
	for b.Loop() {
		if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
	b.StopTimer()
	_ = cs.Close()
	<-done
}
