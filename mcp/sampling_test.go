//lint:file-ignore SA1019 MCP deprecates sampling (SEP-2577) but still supports it: this test checks that it works

package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestSamplingThroughClientOptions: a tool of a server built with
// NewServer asks its client to sample (sampling/createMessage) during a
// call, and the handler passed to Connect with WithClientOptions answers
// it: a real round trip, not only the capability. (A server may not send
// sampling/createMessage while it serves tools/call on protocol
// 2026-07-28: the tool returns an input request, which the SDK's client
// fulfils with the handler and retries.)
func TestSamplingThroughClientOptions(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	srv := NewServer(fixture(t))
	srv.AddTool(&sdk.Tool{Name: "summarize", Description: "Asks the client's model.", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
			// Protocol 2026-07-28 (SEP-2322): the tool asks with an
			// input-required result and is called again with the answer.
			answer, ok := req.Params.InputResponses["sample"].(*sdk.CreateMessageWithToolsResult)
			if !ok {
				return &sdk.CallToolResult{InputRequests: sdk.InputRequestMap{"sample": &sdk.CreateMessageParams{
					MaxTokens: 50,
					Messages:  []*sdk.SamplingMessage{{Role: "user", Content: &sdk.TextContent{Text: "say hi"}}},
				}}}, nil
			}
			require.Len(t, answer.Content, 1)
			text := answer.Content[0].(*sdk.TextContent).Text
			return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "the model said: " + text + " (" + answer.Model + ")"}}}, nil
		})
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })

	var asked []string
	c, err := Connect(ctx, ct, WithClientOptions(&sdk.ClientOptions{
		CreateMessageHandler: func(_ context.Context, req *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			for _, m := range req.Params.Messages {
				asked = append(asked, m.Content.(*sdk.TextContent).Text)
			}
			return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: "hi"}, Model: "host-model", Role: "assistant"}, nil
		},
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	out, err := c.Resolve(ctx, llmtoolkit.Call{Name: "summarize"})
	require.NoError(t, err)
	assert.Equal(t, "the model said: hi (host-model)", out)
	assert.Equal(t, []string{"say hi"}, asked, "the server's request reached the host's handler")
}
