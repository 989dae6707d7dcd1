package mcpgo_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/require"
)

// funcs is a resolver of tools answered by functions; its list may change.
type funcs struct {
	tools []llmtoolkit.Tool
	run   map[string]func(ctx context.Context, args map[string]any) (string, error)
}

func (f *funcs) Tools() []llmtoolkit.Tool { return f.tools }

func (f *funcs) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	fn, ok := f.run[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	return fn(ctx, call.Arguments)
}

var objectText = map[string]any{
	"type":                 "object",
	"properties":           map[string]any{"text": map[string]any{"type": "string"}},
	"required":             []any{"text"},
	"additionalProperties": false,
}

// echoTools has echo, fail (an error), boom (a panic) and show (a Display).
func echoTools() *funcs {
	return &funcs{
		tools: []llmtoolkit.Tool{
			llmtoolkit.MustTool("echo", "Echo the text.", objectText),
			llmtoolkit.MustTool("fail", "Fail with the text.", objectText),
			llmtoolkit.MustTool("boom", "Panic.", objectText),
			llmtoolkit.MustTool("show", "Show the text.", objectText),
		},
		run: map[string]func(ctx context.Context, args map[string]any) (string, error){
			"echo": func(_ context.Context, a map[string]any) (string, error) { return a["text"].(string), nil },
			"fail": func(_ context.Context, a map[string]any) (string, error) {
				return "", fmt.Errorf("cannot do %s", a["text"])
			},
			"boom": func(context.Context, map[string]any) (string, error) { panic("kaboom") },
			"show": func(ctx context.Context, a map[string]any) (string, error) {
				llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "note", Payload: map[string]any{"text": a["text"]}})
				return "shown", nil
			},
		},
	}
}

// serve registers r on a new mcp-go server and returns an initialized
// in-process client of it.
func serve(t testing.TB, r llmtoolkit.Resolver, opts ...mcpgo.Option) (*server.MCPServer, *mcpgo.Registration, *client.Client) {
	t.Helper()
	s := server.NewMCPServer("test", "1.0.0", server.WithToolCapabilities(true))
	reg, err := mcpgo.Register(s, r, opts...)
	require.NoError(t, err)
	c, err := client.NewInProcessClient(s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.Start(ctx))
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "1"}
	_, err = c.Initialize(ctx, init)
	require.NoError(t, err)
	return s, reg, c
}

func callTool(t testing.TB, c *client.Client, name string, args any) *mcp.CallToolResult {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	return res
}

func text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	require.Len(t, res.Content, 1)
	tc, ok := res.Content[0].(mcp.TextContent)
	require.True(t, ok, "text content, got %T", res.Content[0])
	return tc.Text
}
