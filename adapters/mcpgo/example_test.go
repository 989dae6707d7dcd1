package mcpgo_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	ltmcp "github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// An mcp-go server serves llmtoolkit's code tools; an mcp-go in-process
// client plays a scripted model's calls, with no network. A failed call is
// a result marked isError the model can read, and each Display arrives in
// the result's _meta.
func Example() {
	root, err := os.MkdirTemp("", "mcpgo-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(root)
	ct, err := codetools.New(root)
	if err != nil {
		log.Fatal(err)
	}

	s := server.NewMCPServer("code", "1.0.0", server.WithToolCapabilities(true))
	if _, err := mcpgo.Register(s, ct); err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	c, err := client.NewInProcessClient(s)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		log.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "scripted-model", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		log.Fatal(err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("tools:", len(tools.Tools))

	// The scripted model's turns.
	script := []struct {
		name string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": "notes.txt", "content": "hello\n"}},
		{"edit_file", map[string]any{"path": "notes.txt", "oldText": "hello", "newText": "hello, mcp-go"}},
		{"read_file", map[string]any{"path": "notes.txt"}},
		{"read_file", map[string]any{"path": "../outside.txt"}},
		{"read_file", map[string]any{"file": "notes.txt"}},
	}
	for _, step := range script {
		req := mcp.CallToolRequest{}
		req.Params.Name = step.name
		req.Params.Arguments = step.args
		res, err := c.CallTool(ctx, req)
		if err != nil {
			log.Fatal(err) // a protocol failure: never a tool's
		}
		kind := "-"
		if res.Meta != nil {
			if d, ok := res.Meta.AdditionalFields[ltmcp.DisplayMetaKey].(map[string]any); ok {
				kind = d["kind"].(string)
			}
		}
		fmt.Printf("%s: isError=%v display=%s\n", step.name, res.IsError, kind)
	}
	content, err := os.ReadFile(root + "/notes.txt")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("notes.txt: %q\n", content)
	// Output:
	// tools: 12
	// write_file: isError=false display=-
	// edit_file: isError=false display=diff
	// read_file: isError=false display=file
	// read_file: isError=true display=-
	// read_file: isError=true display=-
	// notes.txt: "hello, mcp-go\n"
}
