package mcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A resolver served over MCP, and used again as a resolver through a
// client: here both ends are in the same process.
func Example() {
	ctx := context.Background()
	shout := llmtoolkit.MustTool("shout", "Returns the text in capital letters.", map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
		"required":   []any{"text"},
	})
	tools := (&llmtoolkittest.Fake{}).Add(shout, func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return strings.ToUpper(c.Arguments["text"].(string)), nil
	})

	serverEnd, clientEnd := sdk.NewInMemoryTransports()
	session, err := mcp.NewServer(tools, mcp.WithName("shouter")).Connect(ctx, serverEnd, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer session.Close()

	client, err := mcp.Connect(ctx, clientEnd)
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()

	// The remote tools compose with local ones, first match wins.
	r := llmtoolkit.Compose(client, llmtoolkittest.NewFake(map[string]string{"whisper": "psst"}))
	for _, t := range r.Tools() {
		fmt.Println(t.Name, "-", t.Description)
	}
	res := llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "shout", Arguments: map[string]any{"text": "hello"}})
	fmt.Println(res.Content)
	res = llmtoolkit.Execute(ctx, r, llmtoolkit.Call{Name: "shout", Arguments: map[string]any{}})
	fmt.Println(res.IsError, res.Content)
	// Output:
	// shout - Returns the text in capital letters.
	// whisper - Fake tool whisper for tests.
	// HELLO
	// true invalid arguments for tool "shout": /: missing properties: 'text' (add them)
}

// Serving tools to an MCP client (Claude Desktop, an editor) from a
// command: the client starts the command and speaks over its standard input
// and output.
func ExampleServe() {
	tools := llmtoolkittest.NewFake(map[string]string{"ping": "pong"})
	if err := mcp.Serve(context.Background(), tools, mcp.StdioTransport(), mcp.WithName("my-tools")); err != nil {
		log.Fatal(err)
	}
}

// Using the tools of an MCP server started as a subprocess.
func ExampleConnect() {
	ctx := context.Background()
	cmd := exec.Command("llmtoolkit", "mcp", "--root", ".", "--read-only")
	cmd.Stderr = os.Stderr
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res := llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "go.mod"}})
	fmt.Println(res.Content)
}

// Serving tools over streamable HTTP.
func ExampleHandler() {
	tools := llmtoolkittest.NewFake(map[string]string{"ping": "pong"})
	http.Handle("/mcp", mcp.Handler(tools, mcp.WithName("my-tools")))
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}
