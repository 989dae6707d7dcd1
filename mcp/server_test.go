package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestServerListsToolsWithSchemasAndAnnotations(t *testing.T) {
	t.Parallel()
	cs := sdkClient(t, fixture(t), WithName("fixture-server"), WithVersion("v1.2.3"))
	ctx := testContext(t)

	info := cs.InitializeResult().ServerInfo
	assert.Equal(t, "fixture-server", info.Name)
	assert.Equal(t, "v1.2.3", info.Version)
	caps := cs.InitializeResult().Capabilities
	require.NotNil(t, caps)
	assert.NotNil(t, caps.Tools, "tools declared")
	assert.NotNil(t, caps.Prompts, "prompts declared (the SDK answers prompts/list)")
	//lint:ignore SA1019 the legacy versions' capability, still declared
	assert.NotNil(t, caps.Logging, "logging declared: any served tool may send notifications/message with Log")

	byName := map[string]*sdk.Tool{}
	for tool, err := range cs.Tools(ctx, nil) {
		require.NoError(t, err)
		byName[tool.Name] = tool
	}
	require.Len(t, byName, 4)

	echo := byName["echo"]
	require.NotNil(t, echo)
	assert.Equal(t, "Echoes the text.", echo.Description)
	assert.JSONEq(t, mustJSON(t, echoSchema), mustJSON(t, echo.InputSchema), "schema as given")
	require.NotNil(t, echo.Annotations)
	assert.True(t, echo.Annotations.ReadOnlyHint)
	assert.True(t, echo.Annotations.IdempotentHint)
	require.NotNil(t, echo.Annotations.DestructiveHint, "false destructiveHint must be sent")
	assert.False(t, *echo.Annotations.DestructiveHint)
	require.NotNil(t, echo.Annotations.OpenWorldHint, "false openWorldHint must be sent")
	assert.False(t, *echo.Annotations.OpenWorldHint)

	fail := byName["fail"]
	require.NotNil(t, fail.Annotations)
	assert.False(t, fail.Annotations.ReadOnlyHint)
	assert.True(t, *fail.Annotations.DestructiveHint)
	assert.True(t, *fail.Annotations.OpenWorldHint)

	assert.Nil(t, byName["show"].Annotations, "a tool without annotations sends none")
}

func TestServerCalls(t *testing.T) {
	t.Parallel()
	cs := sdkClient(t, fixture(t))
	tests := []struct {
		name        string
		tool        string
		args        map[string]any
		wantText    string
		wantError   bool
		wantDisplay string // JSON of _meta's DisplayMetaKey, "" for none
	}{
		{name: "success", tool: "echo", args: map[string]any{"text": "hello"}, wantText: "hello"},
		{name: "tool error is a result", tool: "fail", wantText: "disk full: free some space and retry", wantError: true},
		{name: "invalid arguments are a result", tool: "echo", args: map[string]any{"times": 0},
			wantText: `invalid arguments for tool "echo": /: missing properties: 'text' (add them); /times: must be >= 1 but found 0`, wantError: true},
		{name: "panic is rescued", tool: "boom", wantText: "tool execution failed: kaboom", wantError: true},
		{name: "display travels in _meta, the text is the answer", tool: "show", wantText: "shown",
			wantDisplay: `{"kind":"diff","payload":{"path":"a.txt","added":2}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: tt.tool, Arguments: tt.args})
			require.NoError(t, err, "a tool's failure must not be a protocol error")
			assert.Equal(t, tt.wantError, res.IsError)
			require.Len(t, res.Content, 1)
			text, ok := res.Content[0].(*sdk.TextContent)
			require.True(t, ok, "content is text, got %T", res.Content[0])
			assert.Equal(t, tt.wantText, text.Text)
			// No tool declares an output schema: per the MCP specification
			// there is no structured result, and clients (ADK Go's toolset,
			// for one) give the model the text.
			assert.Nil(t, res.StructuredContent, "no structuredContent without an output schema")
			if tt.wantDisplay == "" {
				assert.NotContains(t, res.Meta, DisplayMetaKey)
			} else {
				require.Contains(t, res.Meta, DisplayMetaKey)
				assert.JSONEq(t, tt.wantDisplay, mustJSON(t, res.Meta[DisplayMetaKey]))
			}
		})
	}
}

func TestServerUnknownToolIsProtocolError(t *testing.T) {
	t.Parallel()
	cs := sdkClient(t, fixture(t))
	_, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "nope"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown tool "nope"`)
}

func TestServerSkipsDuplicatesAndNonObjectSchemas(t *testing.T) {
	t.Parallel()
	first := llmtoolkit.MustTool("dup", "First definition.", nil)
	second := llmtoolkit.MustTool("dup", "Second definition.", nil)
	bad := llmtoolkit.Tool{Name: "bad", Description: "Array schema.", Parameters: map[string]any{"type": "array"}}
	r := staticResolver{first, second, bad}

	cs := sdkClient(t, r)
	res, err := cs.ListTools(testContext(t), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 1)
	assert.Equal(t, "dup", res.Tools[0].Name)
	assert.Equal(t, "First definition.", res.Tools[0].Description)
}

func TestServerNilResolverServesNoTools(t *testing.T) {
	t.Parallel()
	cs := sdkClient(t, nil)
	res, err := cs.ListTools(testContext(t), nil)
	require.NoError(t, err)
	assert.Empty(t, res.Tools)
}

// TestServerWire checks the bytes on the wire, independently of the SDK's
// client: false hints are present, and arguments that are not a JSON object
// are answered with an error result.
func TestServerWire(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, fixture(t), &sdk.IOTransport{Reader: inR, Writer: outW}) }()

	lines := bufio.NewScanner(outR)
	lines.Buffer(make([]byte, 1<<20), 1<<20)
	send := func(msg string) {
		_, err := io.WriteString(inW, msg+"\n")
		require.NoError(t, err)
	}
	recv := func() map[string]any {
		require.True(t, lines.Scan(), "server answered nothing: %v", lines.Err())
		var m map[string]any
		require.NoError(t, json.Unmarshal(lines.Bytes(), &m), lines.Text())
		return m
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	require.Contains(t, recv(), "result")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)

	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}`)
	list := recv()
	tools := list["result"].(map[string]any)["tools"].([]any)
	var echo map[string]any
	for _, tl := range tools {
		if tl.(map[string]any)["name"] == "echo" {
			echo = tl.(map[string]any)
		}
	}
	require.NotNil(t, echo)
	assert.Equal(t, map[string]any{
		"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false,
	}, echo["annotations"])

	for i, args := range []string{`"just a string"`, `[1,2]`, `42`} {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":%s}}`, 10+i, args))
		res := recv()
		require.Contains(t, res, "result", "arguments %s must give a tool result, not a protocol error: %v", args, res)
		result := res["result"].(map[string]any)
		assert.Equal(t, true, result["isError"], args)
		text := result["content"].([]any)[0].(map[string]any)["text"].(string)
		assert.Contains(t, text, "arguments must be a JSON object", args)
	}

	require.NoError(t, inW.Close())
	require.NoError(t, <-done)
}

type staticResolver []llmtoolkit.Tool

func (s staticResolver) Tools() []llmtoolkit.Tool { return s }
func (s staticResolver) Resolve(_ context.Context, c llmtoolkit.Call) (string, error) {
	return "called " + c.Name, nil
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return string(data)
}

func TestServerRunsRecipes(t *testing.T) {
	t.Parallel()
	// No ToolLookup: the server must keep the recipe, which its definition carries, working.
	both := llmtoolkit.MustTool("both", "A then B.", nil)
	both.Recipe = func(map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "a"}, {Name: "b"}}}
	}
	r := staticResolver{llmtoolkit.MustTool("a", "A.", nil), llmtoolkit.MustTool("b", "B.", nil), both}
	cs := sdkClient(t, r)
	res, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "both"})
	require.NoError(t, err)
	assert.False(t, res.IsError)
	assert.Equal(t, "called a\n\ncalled b", res.Content[0].(*sdk.TextContent).Text)
}
