package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawServer is a hand-written JSON-RPC MCP server on the server end of an
// in-memory transport: it answers initialize, and every tools/list with
// page(cursor); other requests get an empty result.
func rawServer(t *testing.T, page func(cursor string) map[string]any) sdk.Transport {
	t.Helper()
	st, ct := sdk.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	conn, err := st.Connect(ctx)
	require.NoError(t, err)
	done := make(chan struct{})
	t.Cleanup(func() { cancel(); _ = conn.Close(); <-done })
	go func() {
		defer close(done)
		for {
			msg, err := conn.Read(ctx)
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.ID.IsValid() {
				continue
			}
			var result any = map[string]any{}
			switch req.Method {
			case "initialize":
				result = map[string]any{"protocolVersion": "2025-06-18", "serverInfo": map[string]any{"name": "hostile", "version": "v0"},
					"capabilities": map[string]any{"tools": map[string]any{}}}
			case "tools/list":
				var p struct {
					Cursor string `json:"cursor"`
				}
				_ = json.Unmarshal(req.Params, &p)
				result = page(p.Cursor)
			}
			data, _ := json.Marshal(result)
			if conn.Write(ctx, &jsonrpc.Response{ID: req.ID, Result: data}) != nil {
				return
			}
		}
	}()
	return ct
}

// toolPage is a page of n tools named after the page, with next as the
// cursor.
func toolPage(page, n int, next string) map[string]any {
	tools := make([]any, n)
	for i := range tools {
		tools[i] = map[string]any{"name": fmt.Sprintf("t%d_%d", page, i), "description": "A tool of a page that never ends.",
			"inputSchema": map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "string"}}}}
	}
	res := map[string]any{"tools": tools}
	if next != "" {
		res["nextCursor"] = next
	}
	return res
}

// peakHeapGrowth runs fn and returns by how much the heap in use grew at
// its highest, sampled every 10 ms.
func peakHeapGrowth(fn func()) int64 {
	before := heapInUse()
	var peak uint64
	stop, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	fn()
	close(stop)
	<-done
	return int64(peak) - int64(before)
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// TestRefreshBounded: Connect to a server that sends a new page of 500
// tools forever grew by 600–800 MiB in 10–15 s and never ended with a
// background context; a repeated cursor looped until the context ended.
// Each now ends at once with ErrListLimit naming the server and the bound.
func TestRefreshBounded(t *testing.T) {
	n := 0
	endless := func(string) map[string]any { n++; return toolPage(n, 500, fmt.Sprintf("page-%d", n)) }
	tests := []struct {
		name string
		page func(string) map[string]any
		opts []Option
		want string
	}{
		{"endless pages of 500 tools", endless, nil, "listed more than 1000 tools"},
		{"endless empty pages", func(c string) map[string]any { n++; return toolPage(n, 0, fmt.Sprintf("p%d", n)) }, nil,
			"sent more than 100 pages of tools"},
		{"a repeated cursor", func(c string) map[string]any {
			n++
			return toolPage(n, 1, map[string]string{"": "a", "a": "b", "b": "a"}[c])
		}, nil, `sent the cursor "a" a second time`},
		{"lower bounds", endless, []Option{WithMaxTools(10_000), WithMaxToolPages(3)}, "sent more than 3 pages"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n = 0
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			start := time.Now()
			var err error
			grown := peakHeapGrowth(func() { _, err = Connect(ctx, rawServer(t, tc.page), tc.opts...) })
			took := time.Since(start)
			t.Logf("Connect ended after %v, %d pages, heap grown by %d KiB at most", took, n, grown>>10)
			require.ErrorIs(t, err, ErrListLimit)
			assert.Contains(t, err.Error(), `MCP server "hostile"`)
			assert.Contains(t, err.Error(), tc.want)
			assert.Less(t, took, 10*time.Second)
			assert.Less(t, grown, int64(64<<20))
		})
	}
	t.Run("within the bounds", func(t *testing.T) {
		pages := func(c string) map[string]any {
			switch c {
			case "":
				return toolPage(1, 400, "two")
			case "two":
				return toolPage(2, 400, "three")
			}
			return toolPage(3, 200, "")
		}
		c, err := Connect(testContext(t), rawServer(t, pages))
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		assert.Len(t, c.Tools(), 1000)
	})
}

// TestConnectRefusesComplexSchemas: a server's tool whose schema expands
// past WithMaxSchemaNodes (by default llmtoolkit.DefaultMaxSchemaNodes) is
// skipped with a warning naming it; the others are kept.
func TestConnectRefusesComplexSchemas(t *testing.T) {
	t.Parallel()
	defs := map[string]any{"d0": map[string]any{"type": "string"}}
	for i := 1; i <= 20; i++ {
		below := map[string]any{"$ref": fmt.Sprintf("#/$defs/d%d", i-1)}
		defs[fmt.Sprintf("d%d", i)] = map[string]any{"oneOf": []any{below, below}}
	}
	deep := map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"x": map[string]any{"$ref": "#/$defs/d20"}}}
	page := func(string) map[string]any {
		res := toolPage(1, 1, "")
		res["tools"] = append(res["tools"].([]any), map[string]any{"name": "deep", "description": "Hostile.", "inputSchema": deep})
		return res
	}
	var logs bytes.Buffer
	c, err := Connect(testContext(t), rawServer(t, page), WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	assert.Len(t, c.Tools(), 1)
	_, found := c.LookupTool("deep")
	assert.False(t, found, "the hostile tool is refused")
	assert.Contains(t, logs.String(), `tool \"deep\" of MCP server \"hostile\" refused`)
	assert.Contains(t, logs.String(), "above the bound of 20000")

	c2, err := Connect(testContext(t), rawServer(t, page), WithMaxSchemaNodes(1<<23))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c2.Close() })
	_, found = c2.LookupTool("deep")
	assert.True(t, found, "a host that trusts the server raises the bound")
	res := llmtoolkit.Execute(testContext(t), c2, llmtoolkit.Call{Name: "deep", Arguments: map[string]any{"x": 1.0}})
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrSchemaTooComplex, "and validation is still bounded")
}
