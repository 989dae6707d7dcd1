//lint:file-ignore SA1019 these tests cover MCP logging and sampling, deprecated by the protocol but still served

package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"leaver","version":"1"}}}`

// openSession initializes an MCP session over HTTP and leaves without a
// DELETE, as the TypeScript SDK's close() does. It returns the status.
func openSession(t testing.TB, client *http.Client, url string) int {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(initializeBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := client.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	return resp.StatusCode
}

func heapAllocAfterGC() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestHandlerForgetsSessionsClientsLeft: 2,000 clients (5,000 with
// LLMTOOLKIT_STRESS) that initialize and leave without a DELETE do not keep
// the server's memory: idle sessions are closed after the idle timeout.
// Kept, 2,000 sessions hold about 9 MB, twice the margin.
func TestHandlerForgetsSessionsClientsLeft(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 sessions: not in -short")
	}
	srv := httptest.NewServer(Handler(fixture(t), WithSessionIdleTimeout(300*time.Millisecond)))
	t.Cleanup(srv.Close)
	client := srv.Client()
	require.Equal(t, http.StatusOK, openSession(t, client, srv.URL)) // warm up
	time.Sleep(600 * time.Millisecond)
	before := heapAllocAfterGC()

	clients, workers := 2000, 8
	if stress() {
		clients = 5000
	}
	var wg sync.WaitGroup
	next := make(chan struct{})
	for range workers {
		wg.Go(func() {
			for range next {
				assert.Equal(t, http.StatusOK, openSession(t, client, srv.URL))
			}
		})
	}
	for range clients {
		next <- struct{}{}
	}
	close(next)
	wg.Wait()
	peak := heapAllocAfterGC()

	after := heapAllocAfterGC()
	for deadline := time.Now().Add(10 * time.Second); after >= before+4<<20 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		after = heapAllocAfterGC()
	}
	assert.Less(t, after, before+4<<20, "heap: %.1f MB before, %.1f MB after %d sessions, %.1f MB once idle",
		mb(before), mb(peak), clients, mb(after))
	t.Logf("heap: %.1f MB before, %.1f MB after %d sessions, %.1f MB once idle", mb(before), mb(peak), clients, mb(after))
}

func mb(n uint64) float64 { return float64(n) / (1 << 20) }

// TestHandlerCapsLiveSessions: beyond WithMaxSessions live sessions, a new
// one is refused with 503 and a Retry-After; requests of live sessions are
// not.
func TestHandlerCapsLiveSessions(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(Handler(fixture(t), WithMaxSessions(3)))
	t.Cleanup(srv.Close)
	for i := range 3 {
		require.Equal(t, http.StatusOK, openSession(t, srv.Client(), srv.URL), "session %d", i)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL, bytes.NewBufferString(initializeBody))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	assert.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	assert.NotEmpty(t, resp.Header.Get("Retry-After"))
	assert.Contains(t, string(body), "retry later")
}

// TestSDKOptionsPassThrough: the official SDK's server and client options
// reach the SDK, this package's settings applied over them.
func TestSDKOptionsPassThrough(t *testing.T) {
	t.Parallel()
	ctx := testContext(t)
	srv := NewServer(fixture(t), WithServerOptions(&sdk.ServerOptions{
		Instructions: "from the SDK options",
		Capabilities: &sdk.ServerCapabilities{Logging: &sdk.LoggingCapabilities{}},
	}))
	st, ct := sdk.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ss.Close() })
	c, err := Connect(ctx, ct, WithClientOptions(&sdk.ClientOptions{
		CreateMessageHandler: func(context.Context, *sdk.CreateMessageRequest) (*sdk.CreateMessageResult, error) {
			return &sdk.CreateMessageResult{Content: &sdk.TextContent{Text: "sampled"}, Model: "m", Role: "assistant"}, nil
		},
	}))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	init := c.session.InitializeResult()
	assert.Equal(t, "from the SDK options", init.Instructions)
	assert.NotNil(t, init.Capabilities.Logging, "the server's own capabilities are kept")
	assert.NotNil(t, init.Capabilities.Tools, "and tools are advertised")
	assert.NotNil(t, ss.InitializeParams().Capabilities.Sampling, "the client's sampling handler is announced")
}
