package mcp_test

import (
	"context"
	"log"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// The README's ADK snippet (examples/readme checks the copy): the code
// tools served on an in-memory transport, whose client end ADK's
// mcptoolset takes (ADK is not a dependency of this module: its two lines
// are comments; Example_adk plays its part).
func Example_readmeADK() {
	ctx, root := context.Background(), "path/to/project"
	// readme:begin adk
	ct, _ := codetools.New(root)
	clientEnd, serverEnd := sdk.NewInMemoryTransports()
	ss, err := mcp.NewServer(ct).Connect(ctx, serverEnd, nil) // the server connects first
	if err != nil {
		log.Fatal(err)
	}
	defer ss.Close()
	// tools, err := mcptoolset.New(mcptoolset.Config{Transport: clientEnd})
	// llmagent.Config{..., Toolsets: []tool.Toolset{tools}}
	// readme:end
	_ = clientEnd
}
