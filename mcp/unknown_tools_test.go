package mcp

import (
	"context"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// seeing is a wrapper that notes every call it is asked to resolve, as an
// audit trail would.
type seeing struct {
	llmtoolkit.Resolver
	mu    sync.Mutex
	calls []llmtoolkit.Call
}

func (s *seeing) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	s.mu.Lock()
	s.calls = append(s.calls, call)
	s.mu.Unlock()
	return s.Resolver.Resolve(ctx, call)
}

// TestServerUnknownToolIsAudited: a call to a tool the server does not
// serve stays a protocol error, as MCP specifies, and reaches the
// resolver's wrappers (an audit row), with its arguments; a listed tool
// the server cannot serve is never run.
func TestServerUnknownToolIsAudited(t *testing.T) {
	t.Parallel()
	ran := false
	bad := llmtoolkit.Tool{Name: "bad", Description: "Array schema.", Parameters: map[string]any{"type": "array"}}
	fake := fixture(t)
	fake.Add(bad, func(context.Context, llmtoolkit.Call) (string, error) { ran = true; return "ran", nil })
	r := &seeing{Resolver: fake}
	cs := sdkClient(t, r)

	_, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "nope", Arguments: map[string]any{"x": 1}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown tool "nope"`, "still MCP's protocol error")
	_, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "bad"})
	require.Error(t, err)
	_, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)

	r.mu.Lock()
	defer r.mu.Unlock()
	require.Len(t, r.calls, 2, "the unknown call and the served one")
	assert.Equal(t, "nope", r.calls[0].Name)
	assert.Equal(t, map[string]any{"x": float64(1)}, r.calls[0].Arguments)
	assert.Equal(t, "echo", r.calls[1].Name)
	assert.False(t, ran, "a tool the server does not serve never runs")
}
