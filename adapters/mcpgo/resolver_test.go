package mcpgo_test

import (
	"context"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	ltmcp "github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// An mcp-go server's own tools (written with mcp-go, not llmtoolkit) become a
// Resolver: schemas converted, errors as results, hints defaulted.
func TestFromServerNativeTools(t *testing.T) {
	s := server.NewMCPServer("native", "1.0.0")
	s.AddTool(mcp.NewTool("greet", mcp.WithDescription("Greet someone."),
		mcp.WithString("name", mcp.Required()), mcp.WithReadOnlyHintAnnotation(true)),
		func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name, err := req.RequireString("name")
			if err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
			if name == "nobody" {
				return mcp.NewToolResultError("nobody is not there"), nil
			}
			return mcp.NewToolResultText("hello " + name), nil
		})
	s.AddTool(mcp.NewTool("stats", mcp.WithDescription("Structured.")),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultStructured(map[string]any{"n": 2}, "n is 2"), nil
		})
	ctx := context.Background()
	r, err := mcpgo.FromServer(ctx, s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })

	greet, ok := llmtoolkit.FindTool(r, "greet")
	require.True(t, ok)
	assert.Equal(t, "Greet someone.", greet.Description)
	assert.Equal(t, []any{"name"}, greet.Parameters["required"])
	require.NotNil(t, greet.Annotations)
	assert.True(t, greet.Annotations.ReadOnly)
	assert.True(t, greet.Annotations.OpenWorld, "MCP's default")

	tests := []struct {
		name    string
		call    llmtoolkit.Call
		want    string
		isError bool
	}{
		{"success", llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "ada"}}, "hello ada", false},
		{"tool error", llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "nobody"}}, "nobody is not there", true},
		{"validated before the server", llmtoolkit.Call{Name: "greet", Arguments: map[string]any{}}, "name", true},
		{"unknown tool", llmtoolkit.Call{Name: "nope", Arguments: map[string]any{}}, "nope", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := llmtoolkit.Execute(ctx, r, tt.call)
			assert.Equal(t, tt.isError, res.IsError)
			assert.Contains(t, res.Content, tt.want)
		})
	}
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "greet", Arguments: map[string]any{"name": "nobody"}})
	assert.ErrorIs(t, res.Err, ltmcp.ErrRemoteTool)
	assert.Equal(t, "nobody is not there", res.Content, "the server's text, unchanged")

	stats := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "stats", Arguments: map[string]any{}})
	assert.Equal(t, "n is 2", stats.Content)
	require.NotNil(t, stats.Display)
	assert.Equal(t, "mcp", stats.Display.Kind)
}

// llmtoolkit tools served by mcp-go and read back: Display, sensitive
// fields and deferral come through.
func TestRoundTripDisplayAndSensitiveFields(t *testing.T) {
	r := echoTools()
	r.tools[0].SensitiveFields = []string{"text"}
	r.tools[0].Deferred = true
	_, _, c := serve(t, r)
	ctx := context.Background()
	back, err := mcpgo.NewResolver(ctx, c)
	require.NoError(t, err)
	echo, ok := llmtoolkit.FindTool(back, "echo")
	require.True(t, ok)
	assert.Equal(t, []string{"text"}, echo.SensitiveFields)
	assert.True(t, echo.Deferred)
	show, ok := llmtoolkit.FindTool(back, "show")
	require.True(t, ok)
	assert.False(t, show.Deferred)

	res := llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "show", Arguments: map[string]any{"text": "hi"}})
	require.False(t, res.IsError, res.Content)
	require.NotNil(t, res.Display)
	assert.Equal(t, llmtoolkit.Display{Kind: "note", Payload: map[string]any{"text": "hi"}}, *res.Display)

	boom := llmtoolkit.Execute(ctx, back, llmtoolkit.Call{Name: "boom", Arguments: map[string]any{"text": "x"}})
	assert.True(t, boom.IsError)
	assert.Contains(t, boom.Content, "kaboom")
}

// A server's listing is read page by page and bounded: too many tools, or a
// schema too large, is an error, never a silent cut.
func TestListingBounds(t *testing.T) {
	ctx := context.Background()
	newServer := func(t *testing.T) *server.MCPServer {
		s := server.NewMCPServer("paged", "1.0.0", server.WithPaginationLimit(1))
		_, err := mcpgo.Register(s, echoTools())
		require.NoError(t, err)
		return s
	}
	tests := []struct {
		name    string
		opts    []mcpgo.Option
		wantErr error
	}{
		{"every page read", nil, nil},
		{"too many tools", []mcpgo.Option{mcpgo.WithMaxTools(3)}, ltmcp.ErrListLimit},
		{"schema too large", []mcpgo.Option{mcpgo.WithMaxSchemaNodes(1)}, llmtoolkit.ErrSchemaTooComplex},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := mcpgo.FromServer(ctx, newServer(t), tt.opts...)
			if tt.wantErr != nil {
				require.ErrorIs(t, err, tt.wantErr)
				return
			}
			require.NoError(t, err)
			t.Cleanup(func() { _ = r.Close() })
			assert.Len(t, r.Tools(), 4)
		})
	}
}

// What mcp-go's client keeps of a schema: the documented keywords, with
// draft-07 definitions as $defs; the others are dropped before the adapter.
func TestFromServerSchemaAsMCPGoDecodesIt(t *testing.T) {
	s := server.NewMCPServer("raw", "1.0.0")
	schema := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",` +
		`"description":"top","properties":{"p":{"$ref":"#/definitions/P"}},"definitions":{"P":{"type":"string"}},"anyOf":[{"required":["p"]}]}`
	s.AddTool(mcp.NewToolWithRawSchema("raw", "Raw schema.", []byte(schema)),
		func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("ok"), nil
		})
	r, err := mcpgo.FromServer(context.Background(), s)
	require.NoError(t, err)
	t.Cleanup(func() { _ = r.Close() })
	got, ok := llmtoolkit.FindTool(r, "raw")
	require.True(t, ok)
	assert.Equal(t, map[string]any{
		"type":       "object",
		"properties": map[string]any{"p": map[string]any{"$ref": "#/$defs/P"}},
		"$defs":      map[string]any{"P": map[string]any{"type": "string"}},
	}, got.Parameters)
}
