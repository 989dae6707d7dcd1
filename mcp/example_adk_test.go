package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// ADK Go (google.golang.org/adk) reaches MCP servers through its
// tool/mcptoolset, on the official go-sdk's transports. Here the code tools
// are served on an in-memory transport and read the way mcptoolset reads
// them: ListTools for the declarations, CallTool for a call, the text
// contents joined as the tool's "output", a result marked isError as the
// tool's error. With ADK itself, hand clientEnd to
// mcptoolset.New(mcptoolset.Config{Transport: clientEnd}).
func Example_adk() {
	root, err := os.MkdirTemp("", "adk-mcp")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ct, err := codetools.New(root)
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	// The server connects first: the client initializes the session as it
	// connects.
	ss, err := mcp.NewServer(ct).Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()

	// What mcptoolset does.
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "adk-mcp-client", Version: "v1.0.0"}, nil).Connect(ctx, clientEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	listed, err := cs.ListTools(ctx, &sdk.ListToolsParams{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tools:", len(listed.Tools))

	for _, call := range []struct {
		name string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "hello.txt", "content": "hello, ADK\n"}},
		{"grep", map[string]any{"pattern": "ADK"}},
		{"read_file", map[string]any{"path": "missing.txt"}},
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: call.name, Arguments: call.args})
		if err != nil {
			log.Fatal(err) // a protocol failure, never a tool's
		}
		out := adkResult(res)
		if e, ok := out["error"]; ok {
			fmt.Printf("%s: error: %v\n", call.name, firstLine(e.(string)))
			continue
		}
		fmt.Printf("%s: %s\n", call.name, firstLine(out["output"].(string)))
	}
	// Output:
	// tools: 12
	// write_file: Wrote 11 bytes to hello.txt
	// grep: hello.txt:1: hello, ADK
	// read_file: error: Tool execution failed. Details: file not found: missing.txt
}

// adkResult reads a tools/call result as ADK's mcptoolset does: an error
// result's texts as the error, else the structured content when there is
// one (llmtoolkit sends none: the Display is in _meta), else the texts.
func adkResult(res *sdk.CallToolResult) map[string]any {
	var text strings.Builder
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			text.WriteString(t.Text)
		}
	}
	switch {
	case res.IsError:
		return map[string]any{"error": "Tool execution failed. Details: " + text.String()}
	case res.StructuredContent != nil:
		return map[string]any{"output": res.StructuredContent}
	}
	return map[string]any{"output": text.String()}
}

func firstLine(s string) string {
	first, _, _ := strings.Cut(s, "\n")
	return first
}

// The recipe's guarantees, over the 12 code tools: each listed with its
// description and schema unchanged, each call's text equal to
// llmtoolkit.Execute's answer, no structuredContent (so mcptoolset hands
// the model the text), a failure marked isError, the Display in _meta.
func TestADKRecipe(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("alpha\nbeta\n"), 0o600))
	require.NoError(t, os.Mkdir(filepath.Join(root, "sub"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "b.go"), []byte("package b\n"), 0o600))
	ct, err := codetools.New(root)
	require.NoError(t, err)

	ctx := context.Background()
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	served := make(chan error, 1)
	serveCtx, stop := context.WithCancel(ctx)
	// mcp.Serve, as a host runs it; the client waits for the server's
	// answer to initialize.
	go func() { served <- mcp.Serve(serveCtx, ct, serverEnd) }()
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "adk-mcp-client", Version: "v1.0.0"}, nil).Connect(ctx, clientEnd, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		_ = cs.Close()
		stop()
		<-served
	})

	listed, err := cs.ListTools(ctx, &sdk.ListToolsParams{})
	require.NoError(t, err)
	require.Len(t, listed.Tools, 12)
	byName := make(map[string]*sdk.Tool)
	for _, lt := range listed.Tools {
		byName[lt.Name] = lt
	}
	for _, want := range ct.Tools() {
		lt, ok := byName[want.Name]
		require.True(t, ok, want.Name)
		assert.Equal(t, want.Description, lt.Description, want.Name)
		wantSchema, err := json.Marshal(want.Parameters)
		require.NoError(t, err)
		gotSchema, err := json.Marshal(lt.InputSchema)
		require.NoError(t, err)
		assert.Equal(t, string(wantSchema), string(gotSchema), want.Name)
	}

	tests := []struct {
		name    string
		args    map[string]any
		isError bool
		display string // kind in _meta, "" for none
	}{
		{"read_file", map[string]any{"path": "a.txt"}, false, codetools.DisplayFile},
		{"grep", map[string]any{"pattern": "beta"}, false, codetools.DisplayMatches},
		{"glob", map[string]any{"pattern": "**/*.go"}, false, codetools.DisplayFiles},
		{"list_directory", map[string]any{}, false, ""},
		{"tree", map[string]any{}, false, ""},
		{"file_info", map[string]any{"path": "a.txt"}, false, ""},
		{"read_file", map[string]any{"path": "../outside"}, true, ""},
		{"read_file", map[string]any{"file": "a.txt"}, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tt.name, Arguments: tt.args})
			require.NoError(t, err, "a tool's failure is never a protocol error")
			direct := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: tt.name, Arguments: tt.args})
			assert.Equal(t, tt.isError, res.IsError)
			assert.Equal(t, direct.IsError, res.IsError)
			assert.Nil(t, res.StructuredContent, "mcptoolset would hand it to the model instead of the text")
			out := adkResult(res)
			if tt.isError {
				assert.Equal(t, "Tool execution failed. Details: "+direct.Content, out["error"])
				return
			}
			assert.Equal(t, direct.Content, out["output"])
			if tt.display == "" {
				return
			}
			require.Contains(t, res.Meta, mcp.DisplayMetaKey)
			d, ok := res.Meta[mcp.DisplayMetaKey].(map[string]any)
			require.True(t, ok)
			assert.Equal(t, tt.display, d["kind"])
		})
	}
}
