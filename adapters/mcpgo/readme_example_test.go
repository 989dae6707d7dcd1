package mcpgo_test

import (
	"context"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/server"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// The README's mcp-go snippet (examples/readme checks the copy): the code
// tools on an mcp-go server, and an mcp-go client's tools as a Resolver.
func Example_readme() {
	ctx, root := context.Background(), "path/to/project"
	var local llmtoolkit.Resolver = llmtoolkit.Compose()
	var mcpgoClient client.MCPClient
	// readme:begin mcpgo
	ct, _ := codetools.New(root)
	s := server.NewMCPServer("code", "1.0.0", server.WithToolCapabilities(true))
	reg, err := mcpgo.Register(s, ct) // or mcpgo.ServerTools(ct) for the []server.ServerTool

	r, err := mcpgo.NewResolver(ctx, mcpgoClient) // or mcpgo.FromServer(ctx, s), in process
	all := llmtoolkit.Compose(local, r)
	// readme:end
	_, _, _ = reg, err, all
}
