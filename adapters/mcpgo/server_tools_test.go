package mcpgo_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	ltmcp "github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The 12 code tools keep name, description, hints and a byte-identical
// schema through mcp-go's server, its in-process client and back into a
// Resolver.
func TestCodeToolsSchemaRoundTrip(t *testing.T) {
	ct, err := codetools.New(t.TempDir())
	require.NoError(t, err)
	s, _, c := serve(t, ct)
	// The bytes an MCP client reads: tools/list answered by the server.
	resp := s.HandleMessage(context.Background(), json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
	wireJSON, err := json.Marshal(resp)
	require.NoError(t, err)
	var listed struct {
		Result struct {
			Tools []listedTool `json:"tools"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal(wireJSON, &listed))
	back, err := mcpgo.NewResolver(context.Background(), c)
	require.NoError(t, err)

	want := ct.Tools()
	require.Len(t, want, 12)
	require.Len(t, listed.Result.Tools, 12)
	require.Len(t, back.Tools(), 12)
	for _, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			wantJSON, err := json.Marshal(w.Parameters)
			require.NoError(t, err)
			i := slices.IndexFunc(listed.Result.Tools, func(lt listedTool) bool {
				return lt.Name == w.Name
			})
			require.GreaterOrEqual(t, i, 0, "listed")
			tool := listed.Result.Tools[i]
			assert.Equal(t, w.Description, tool.Description)
			assert.Equal(t, string(wantJSON), string(tool.InputSchema), "schema on the wire")

			got, ok := llmtoolkit.FindTool(back, w.Name)
			require.True(t, ok)
			gotJSON, err := json.Marshal(got.Parameters)
			require.NoError(t, err)
			assert.Equal(t, string(wantJSON), string(gotJSON), "schema back in a Resolver")
			assert.Equal(t, w.Name, got.Name)
			assert.Equal(t, w.Description, got.Description)
			assert.Equal(t, w.Annotations, got.Annotations)
		})
	}
}

// Every call runs through llmtoolkit.Execute: failures of any kind are
// results marked isError, never a protocol error.
func TestCallsGoThroughExecute(t *testing.T) {
	_, _, c := serve(t, echoTools())
	tests := []struct {
		name, tool string
		args       any
		want       string // a part of the text
		isError    bool
	}{
		{"success", "echo", map[string]any{"text": "hi"}, "hi", false},
		{"tool error", "fail", map[string]any{"text": "that"}, "cannot do that", true},
		{"panic rescued", "boom", map[string]any{"text": "x"}, "kaboom", true},
		{"invalid arguments", "echo", map[string]any{"text": 3}, "text", true},
		{"missing argument", "echo", map[string]any{}, "text", true},
		{"no arguments", "echo", nil, "text", true},
		{"arguments not an object", "echo", []any{"hi"}, "object", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := callTool(t, c, tt.tool, tt.args)
			assert.Equal(t, tt.isError, res.IsError)
			assert.Contains(t, text(t, res), tt.want)
			assert.Nil(t, res.StructuredContent)
		})
	}
}

// A Display reaches the client in _meta under the core's DisplayMetaKey,
// in the shape llmtoolkit's own MCP server sends.
func TestDisplayInMeta(t *testing.T) {
	_, _, c := serve(t, echoTools())
	res := callTool(t, c, "show", map[string]any{"text": "hi"})
	require.False(t, res.IsError)
	assert.Equal(t, "shown", text(t, res))
	require.NotNil(t, res.Meta)
	assert.Equal(t, map[string]any{"kind": "note", "payload": map[string]any{"text": "hi"}},
		res.Meta.AdditionalFields[ltmcp.DisplayMetaKey])
	assert.Equal(t, "io.llmtoolkit/display", ltmcp.DisplayMetaKey)

	plain := callTool(t, c, "echo", map[string]any{"text": "hi"})
	if plain.Meta != nil {
		assert.NotContains(t, plain.Meta.AdditionalFields, ltmcp.DisplayMetaKey)
	}
}

// A code tool's Display (read_file's FilePayload) travels whole.
func TestCodeToolsDisplay(t *testing.T) {
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\n"), 0o600))
	ct, err := codetools.New(root)
	require.NoError(t, err)
	_, _, c := serve(t, ct)
	res := callTool(t, c, "read_file", map[string]any{"path": "a.txt"})
	require.False(t, res.IsError, text(t, res))
	assert.Contains(t, text(t, res), "alpha")
	d, ok := res.Meta.AdditionalFields[ltmcp.DisplayMetaKey].(map[string]any)
	require.True(t, ok)
	assert.Equal(t, codetools.DisplayFile, d["kind"])

	outside := callTool(t, c, "read_file", map[string]any{"path": "../../etc/passwd"})
	assert.True(t, outside.IsError)
}

// WithSession binds the session map a tool reads.
func TestWithSession(t *testing.T) {
	r := echoTools()
	r.run["echo"] = func(ctx context.Context, _ map[string]any) (string, error) {
		id, _ := llmtoolkit.ScopeFrom(ctx).Session["conversation_id"].(string)
		return "session " + id, nil
	}
	_, _, c := serve(t, r, mcpgo.WithSession(func(_ context.Context, req mcp.CallToolRequest) map[string]any {
		return map[string]any{"conversation_id": "c-1"}
	}))
	assert.Equal(t, "session c-1", text(t, callTool(t, c, "echo", map[string]any{"text": "x"})))
}

// Refresh replaces the server's tools with the resolver's current list, and
// a resolver over the client sees the change after its own Refresh.
func TestRefreshFollowsAChangingList(t *testing.T) {
	r := echoTools()
	_, reg, c := serve(t, r)
	ctx := context.Background()
	back, err := mcpgo.NewResolver(ctx, c)
	require.NoError(t, err)
	require.Len(t, back.Tools(), 4)

	r.tools = r.tools[:1] // plan mode: echo only
	require.NoError(t, reg.Refresh())
	assert.Equal(t, []string{"echo"}, reg.Names())
	require.NoError(t, back.Refresh(ctx))
	require.Len(t, back.Tools(), 1)
	assert.Equal(t, "echo", back.Tools()[0].Name)
	req := mcp.CallToolRequest{}
	req.Params.Name = "fail"
	_, err = c.CallTool(ctx, req)
	assert.Error(t, err, "a removed tool is no longer served")
}

func TestNotObjectSchemaIsAnError(t *testing.T) {
	r := &funcs{tools: []llmtoolkit.Tool{{Name: "odd", Description: "Odd.", Parameters: map[string]any{"type": "string"}}}}
	_, err := mcpgo.ServerTools(r)
	require.ErrorIs(t, err, mcpgo.ErrNotObjectSchema)
	assert.Contains(t, err.Error(), `"odd"`)
}

// listedTool is a tool as tools/list sends it, its schema as raw bytes.
type listedTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
}

// What a tool reports with llmtoolkit.ReportProgress reaches a client that
// sent a progressToken as notifications/progress.
func TestProgressNotifications(t *testing.T) {
	r := echoTools()
	r.run["echo"] = func(ctx context.Context, _ map[string]any) (string, error) {
		llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: 1, Total: 2, Message: "half"})
		return "done", nil
	}
	_, _, c := serve(t, r)
	got := make(chan mcp.JSONRPCNotification, 4)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			got <- n
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"text": "x"}
	req.Params.Meta = &mcp.Meta{ProgressToken: "tok-1"}
	res, err := c.CallTool(context.Background(), req)
	require.NoError(t, err)
	assert.Equal(t, "done", text(t, res))
	select {
	case n := <-got:
		f := n.Params.AdditionalFields
		assert.Equal(t, "tok-1", f["progressToken"])
		assert.EqualValues(t, 1, f["progress"])
		assert.EqualValues(t, 2, f["total"])
		assert.Equal(t, "half", f["message"])
	case <-time.After(2 * time.Second):
		t.Fatal("no progress notification")
	}
}

// Calls from many goroutines while the list is refreshed: no race, every
// call answered.
func TestConcurrentCallsAndRefresh(t *testing.T) {
	_, reg, c := serve(t, echoTools())
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				res := callTool(t, c, "echo", map[string]any{"text": "x"})
				assert.Equal(t, "x", text(t, res))
			}
		})
	}
	for range 10 {
		require.NoError(t, reg.Refresh())
	}
	wg.Wait()
}
