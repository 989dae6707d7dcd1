package mcp

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestCallIDFromMeta: the server makes the _meta call id, bound to the
// arguments (44136fa355b3678a: the SHA-256 of {}), the call's ID (what a
// trace.Recorder records as call_id, the same on each retry);
// the Client sends the call's idempotency key there; an id that is not a
// string or too long is ignored.
func TestCallIDFromMeta(t *testing.T) {
	f := (&llmtoolkittest.Fake{}).Add(llmtoolkit.MustTool("id", "Answers its call's ID.", map[string]any{"type": "object", "properties": map[string]any{}}),
		func(_ context.Context, c llmtoolkit.Call) (string, error) { return "id=" + c.ID, nil })
	srv := httptest.NewServer(Handler(f, WithLogger(slog.New(slog.DiscardHandler))))
	t.Cleanup(srv.Close)
	cs := sdkSession(t, srv.URL, CurrentProtocolVersion, nil)
	for _, tc := range []struct {
		name string
		meta sdk.Meta
		want string
	}{
		{"given", sdk.Meta{CallIDMetaKey: "call-7"}, "id=call-7#44136fa355b3678a"},
		{"none", nil, "id="},
		{"not a string", sdk.Meta{CallIDMetaKey: 7}, "id="},
		{"too long", sdk.Meta{CallIDMetaKey: strings.Repeat("x", MaxCallIDBytes+1)}, "id="},
		{"longest", sdk.Meta{CallIDMetaKey: strings.Repeat("x", MaxCallIDBytes)}, "id=" + strings.Repeat("x", MaxCallIDBytes) + "#44136fa355b3678a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			params := &sdk.CallToolParams{Name: "id", Arguments: map[string]any{}}
			params.Meta = tc.meta
			res, err := cs.CallTool(testContext(t), params)
			require.NoError(t, err)
			assert.Equal(t, tc.want, res.Content[0].(*sdk.TextContent).Text)
		})
	}
	t.Run("Client", func(t *testing.T) {
		c, err := Connect(testContext(t), HTTPTransport(srv.URL, nil))
		require.NoError(t, err)
		defer c.Close()
		ctx := llmtoolkit.WithScope(testContext(t), func(sc *llmtoolkit.Scope) { sc.RunID = "run-1" })
		call := llmtoolkit.Call{ID: "toolu_1", Name: "id", Arguments: map[string]any{}}
		out, err := c.Resolve(ctx, call)
		require.NoError(t, err)
		assert.Equal(t, "id="+boundCallID(llmtoolkit.IdempotencyKey(ctx, call), call.Arguments), out)
		out, err = c.Resolve(ctx, llmtoolkit.Call{Name: "id"})
		require.NoError(t, err)
		assert.Equal(t, "id=", out, "a call without an ID sends none")
	})
}
