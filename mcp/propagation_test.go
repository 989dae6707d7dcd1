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

type traceKey struct{}

// fakePropagator carries the value of traceKey as "traceparent", and
// records the _meta of every request it extracts from.
type fakePropagator struct {
	mu   sync.Mutex
	seen []map[string]any
}

func (p *fakePropagator) Inject(ctx context.Context, meta map[string]any) {
	if v, ok := ctx.Value(traceKey{}).(string); ok {
		meta["traceparent"] = v
	}
}

func (p *fakePropagator) Extract(ctx context.Context, meta map[string]any) context.Context {
	p.mu.Lock()
	p.seen = append(p.seen, meta)
	p.mu.Unlock()
	if v, ok := meta["traceparent"].(string); ok {
		return context.WithValue(ctx, traceKey{}, v)
	}
	return ctx
}

// TestPropagatorCarriesTraceContext checks both hooks: the client writes
// the caller's context into the request's _meta, and the server runs the
// tool with the context read from it.
func TestPropagatorCarriesTraceContext(t *testing.T) {
	t.Parallel()
	f := fixture(t)
	var got []any
	var mu sync.Mutex
	f.Handle("ctx", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		mu.Lock()
		got = append(got, ctx.Value(traceKey{}))
		mu.Unlock()
		return "ok", nil
	})
	server, client := &fakePropagator{}, &fakePropagator{}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(f, WithPropagator(server)).Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(testContext(t), ct, WithPropagator(client))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	ctx := context.WithValue(testContext(t), traceKey{}, "00-trace-span-01")
	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "ctx"})
	require.False(t, res.IsError, res.Content)
	res = llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "ctx"})
	require.False(t, res.IsError, res.Content)

	assert.Equal(t, []any{"00-trace-span-01", nil}, got, "the first call carried the caller's context, the second had none")
	server.mu.Lock()
	defer server.mu.Unlock()
	var carried int
	for _, meta := range server.seen {
		if meta["traceparent"] == "00-trace-span-01" {
			carried++
		}
	}
	assert.Equal(t, 1, carried, "only the request made with the context carried it: %v", server.seen)
}

// TestPropagatorKeepsCallerMeta checks that the client adds to the _meta a
// caller set through the SDK session, without writing into the caller's map.
func TestPropagatorKeepsCallerMeta(t *testing.T) {
	t.Parallel()
	server := &fakePropagator{}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(fixture(t), WithPropagator(server)).Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(testContext(t), ct, WithPropagator(&fakePropagator{}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	mine := map[string]any{"example.com/request": "r1"}
	ctx := context.WithValue(testContext(t), traceKey{}, "00-abc-def-01")
	_, err = c.Session().CallTool(ctx, &sdk.CallToolParams{Meta: mine, Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	assert.NotContains(t, mine, "traceparent", "the caller's map gets no trace context (the SDK adds its own keys to it)")
	server.mu.Lock()
	defer server.mu.Unlock()
	last := server.seen[len(server.seen)-1]
	assert.Equal(t, "r1", last["example.com/request"])
	assert.Equal(t, "00-abc-def-01", last["traceparent"])
}

// TestNoPropagatorNoMeta checks that without WithPropagator nothing is
// added to requests.
func TestNoPropagatorNoMeta(t *testing.T) {
	t.Parallel()
	server := &fakePropagator{}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := NewServer(fixture(t), WithPropagator(server)).Connect(testContext(t), st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(testContext(t), ct)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.WithValue(testContext(t), traceKey{}, "00-abc-def-01")
	res := llmtoolkit.Execute(ctx, c, llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "hi"}})
	require.False(t, res.IsError, res.Content)
	server.mu.Lock()
	defer server.mu.Unlock()
	for _, meta := range server.seen {
		assert.NotContains(t, meta, "traceparent")
	}
}
