package mcp

import (
	"context"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestClientReadsDisplayFromMetaAndOlderStructuredContent: the client shows
// the Display a server sends in _meta, prefers it to structured content,
// and still reads the {"kind","payload"} structuredContent that older
// llmtoolkit servers sent.
func TestClientReadsDisplayFromMetaAndOlderStructuredContent(t *testing.T) {
	t.Parallel()
	diff := map[string]any{"kind": "diff", "payload": map[string]any{"path": "a.txt"}}
	tests := []struct {
		name   string
		result *sdk.CallToolResult
		want   *llmtoolkit.Display
	}{
		{"display in _meta", &sdk.CallToolResult{Meta: sdk.Meta{DisplayMetaKey: diff}},
			&llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a.txt"}}},
		{"_meta wins over structured content", &sdk.CallToolResult{Meta: sdk.Meta{DisplayMetaKey: diff}, StructuredContent: map[string]any{"n": 1}},
			&llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a.txt"}}},
		{"older server: display as structuredContent", &sdk.CallToolResult{StructuredContent: diff},
			&llmtoolkit.Display{Kind: "diff", Payload: map[string]any{"path": "a.txt"}}},
		{"no display", &sdk.CallToolResult{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := sdk.NewServer(&sdk.Implementation{Name: "older", Version: "v0"}, nil)
			srv.AddTool(&sdk.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}},
				func(context.Context, *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
					res := *tt.result
					res.Content = []sdk.Content{&sdk.TextContent{Text: "the answer"}}
					return &res, nil
				})
			st, ct := sdk.NewInMemoryTransports()
			ss, err := srv.Connect(testContext(t), st, nil)
			require.NoError(t, err)
			t.Cleanup(func() { _ = ss.Close() })
			c, err := Connect(testContext(t), ct)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })

			res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "t", Arguments: map[string]any{}})
			assert.Equal(t, "the answer", res.Content)
			assert.Equal(t, tt.want, res.Display)
		})
	}
}
