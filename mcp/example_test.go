package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

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

// Serving tools from replicas behind a load balancer: every client, of the
// current protocol or (WithStateless) a legacy one, is served without a
// session, and a replica asked to stop drains before it exits.
func ExampleHTTPHandler_Shutdown() {
	tools := llmtoolkittest.NewFake(map[string]string{"ping": "pong"})
	h := mcp.Handler(tools, mcp.WithStateless(), mcp.WithRequestStateKey([]byte(os.Getenv("MCP_STATE_KEY"))))
	srv := &http.Server{Addr: "localhost:8080", Handler: h}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		drain, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		// New requests get 503 + Retry-After; the calls in flight finish.
		if err := h.Shutdown(drain); err != nil {
			log.Print(err)
		}
		_ = srv.Shutdown(drain)
	}()
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		log.Fatal(err)
	}
}

// A tool that asks the user before it acts: the first call answers with an
// input-required result; the client asks its user (its elicitation
// handler) and calls again with the answer.
func ExampleInputRequired() {
	ctx := context.Background()
	del := llmtoolkit.MustTool("delete_branch", "Deletes a git branch once the user approves.", map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
	})
	tools := (&llmtoolkittest.Fake{}).Add(del, func(ctx context.Context, c llmtoolkit.Call) (string, error) {
		name := c.Arguments["name"].(string)
		answers, asked := mcp.InputFrom(ctx)
		if a, ok := answers["approve"].(*sdk.ElicitResult); ok && asked == name {
			if a.Action != "accept" {
				return "", fmt.Errorf("the user did not approve deleting %s", name)
			}
			return "deleted " + name, nil
		}
		return "", mcp.InputRequired(sdk.InputRequestMap{
			"approve": &sdk.ElicitParams{Message: "Delete branch " + name + "?"},
		}, name)
	})
	srv := httptest.NewServer(mcp.Handler(tools))
	defer srv.Close()

	client, err := mcp.Connect(ctx, mcp.HTTPTransport(srv.URL, nil), mcp.WithClientOptions(&sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			return &sdk.ElicitResult{Action: "accept"}, nil
		},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	res := llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "delete_branch", Arguments: map[string]any{"name": "old"}})
	fmt.Println(res.Content)
	// Output:
	// asked: Delete branch old?
	// deleted old
}
