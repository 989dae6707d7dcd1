package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/mcp"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// A tool asks the client's user for a name: over a legacy client's
// session with mcp.Elicit; on the current protocol, which has no session
// (mcp.ErrNoSession), with an input-required result that the client
// answers and the tool reads when it is called again.
func ExampleElicit() {
	ctx := context.Background()
	form := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	ask := &sdk.ElicitParams{Message: "Your name?", RequestedSchema: form}
	greet := llmtoolkit.MustTool("greet", "Greets the user by name.", map[string]any{"type": "object"})
	tools := (&llmtoolkittest.Fake{}).Add(greet, func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		answer, err := mcp.Elicit(ctx, ask)
		if errors.Is(err, mcp.ErrNoSession) {
			responses, _ := mcp.InputFrom(ctx)
			if r, ok := responses["name"].(*sdk.ElicitResult); ok {
				answer, err = r, nil
			} else {
				return "", mcp.InputRequired(sdk.InputRequestMap{"name": ask}, "")
			}
		}
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("hello, %v", answer.Content["name"]), nil
	})
	srv := httptest.NewServer(mcp.Handler(tools))
	defer srv.Close()

	user := &sdk.ClientOptions{ElicitationHandler: func(_ context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
		return &sdk.ElicitResult{Action: "accept", Content: map[string]any{"name": "Ada"}}, nil
	}}
	for _, version := range []string{"2025-11-25", mcp.CurrentProtocolVersion} {
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, user).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: srv.URL}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			log.Fatal(err)
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "greet", Arguments: map[string]any{}})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(version+":", res.Content[0].(*sdk.TextContent).Text)
		_ = cs.Close()
	}
	// Output:
	// 2025-11-25: hello, Ada
	// 2026-07-28: hello, Ada
}
