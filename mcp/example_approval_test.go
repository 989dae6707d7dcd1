package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// An agent-guarded resolver served over MCP asks the client's user to
// approve each call: the guard's callback leaves the call pending with
// the input-required result mcp.Approval returns; the client asks its
// user (its elicitation handler) and calls again with the answer.
func ExampleApproval() {
	ctx := context.Background()
	del := llmtoolkit.MustTool("delete_branch", "Deletes a git branch.", map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}, "required": []any{"name"},
	})
	tools := (&llmtoolkittest.Fake{}).Add(del, func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return "deleted " + c.Arguments["name"].(string), nil
	})
	perms, err := agent.New(agent.Config{CanUseTool: func(ctx context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
		ok, err := mcp.Approval(ctx, call)
		switch {
		case errors.Is(err, mcp.ErrNotServed):
			return agent.Deny("no one to ask")
		case err != nil:
			return agent.Pending(err) // the client is asked; the call does not run
		case !ok:
			return agent.Deny("the user refused this call")
		}
		return agent.Allow()
	}})
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(mcp.Handler(perms.Guard(tools)))
	defer srv.Close()

	answer := "accept"
	client, err := mcp.Connect(ctx, mcp.HTTPTransport(srv.URL, nil), mcp.WithClientOptions(&sdk.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
			fmt.Println("asked:", req.Params.Message)
			return &sdk.ElicitResult{Action: answer}, nil
		},
	}))
	if err != nil {
		log.Fatal(err)
	}
	defer client.Close()
	call := llmtoolkit.Call{Name: "delete_branch", Arguments: map[string]any{"name": "old"}}
	fmt.Println(llmtoolkit.Execute(ctx, client, call).Content)
	answer = "decline"
	fmt.Println(llmtoolkit.Execute(ctx, client, call).Content)
	// Output:
	// asked: Allow the tool "delete_branch" to run with the arguments {"name":"old"}? Accept to allow it, decline to refuse it.
	// deleted old
	// asked: Allow the tool "delete_branch" to run with the arguments {"name":"old"}? Accept to allow it, decline to refuse it.
	// permission denied: tool "delete_branch" was not run: the user refused this call
}
