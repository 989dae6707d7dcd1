package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// hugeAnswerServer serves the fixture over HTTP, except that it answers
// every tools/call with a result of size bytes, as application/json or as
// one server-sent event; sent counts the bytes it managed to write.
func hugeAnswerServer(t *testing.T, size int, sse bool, sent *atomic.Int64) *httptest.Server {
	t.Helper()
	h := Handler(fixture(t), WithName("hostile-http"))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		_ = json.Unmarshal(body, &msg)
		if msg.Method != "tools/call" {
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
			return
		}
		head := fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"`, msg.ID)
		tail := `"}]}}`
		if sse {
			w.Header().Set("Content-Type", "text/event-stream")
			head, tail = "event: message\ndata: "+head, tail+"\n\n"
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		w.WriteHeader(http.StatusOK)
		chunk := bytes.Repeat([]byte("A"), 64<<10)
		n, _ := io.WriteString(w, head)
		sent.Add(int64(n))
		for left := size; left > 0; left -= len(chunk) {
			n, err := w.Write(chunk[:min(len(chunk), left)])
			sent.Add(int64(n))
			if err != nil {
				return
			}
		}
		_, _ = io.WriteString(w, tail)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// TestClientAnswerBounded: a hostile server answering one tools/call over
// HTTPTransport with 128 MiB of application/json made the client read it
// whole (2 GiB allocated, the heap near 900 MiB). Every answer is now
// bounded by WithMaxAnswerBytes (DefaultMaxAnswerBytes, 16 MiB): past it
// the call fails with ErrAnswerTooLarge and the connection is closed
// without reading the rest, as JSON and as server-sent events.
func TestClientAnswerBounded(t *testing.T) {
	const size = 128 << 20
	tests := []struct {
		name  string
		sse   bool
		opts  []Option
		limit int64
	}{
		{"application/json, default bound", false, nil, DefaultMaxAnswerBytes},
		{"application/json, 1 MiB", false, []Option{WithMaxAnswerBytes(1 << 20)}, 1 << 20},
		{"text/event-stream, 1 MiB", true, []Option{WithMaxAnswerBytes(1 << 20)}, 1 << 20},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var sent atomic.Int64
			srv := hugeAnswerServer(t, size, tc.sse, &sent)
			c, err := Connect(testContext(t), HTTPTransport(srv.URL, srv.Client()), tc.opts...)
			require.NoError(t, err)
			t.Cleanup(func() { _ = c.Close() })

			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			_, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
			runtime.ReadMemStats(&after)
			allocated := int64(after.TotalAlloc - before.TotalAlloc)
			t.Logf("allocated %d KiB during the call, the server wrote %d KiB", allocated>>10, sent.Load()>>10)

			require.Error(t, err)
			t.Logf("the call's error: %v", err)
			assert.ErrorIs(t, err, ErrAnswerTooLarge)
			assert.Contains(t, err.Error(), "WithMaxAnswerBytes")
			assert.Less(t, allocated, 4*tc.limit+(8<<20), "the allocation is bounded by the limit, not the answer")
			assert.Less(t, sent.Load(), int64(size), "the rest of the answer is not read")

			_, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo", Arguments: map[string]any{"text": "x"}})
			assert.Error(t, err, "the connection is closed")
		})
	}
}

// TestClientAnswerBoundedStdio: over stdio the bound is the line's length.
func TestClientAnswerBoundedStdio(t *testing.T) {
	t.Parallel()
	sr, sw := io.Pipe() // the server's output, the client's input
	cr, cw := io.Pipe() // the client's output, the server's input
	t.Cleanup(func() { _ = sw.Close(); _ = cr.Close() })
	go func() {
		lines := json.NewDecoder(cr)
		for {
			var msg struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if lines.Decode(&msg) != nil {
				return
			}
			var answer string
			switch msg.Method {
			case "initialize":
				answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":"2025-06-18","serverInfo":{"name":"hostile-stdio","version":"v0"},"capabilities":{"tools":{}}}}`, msg.ID)
			case "tools/list":
				answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}}]}}`, msg.ID)
			case "tools/call":
				answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"%s"}]}}`, msg.ID, strings.Repeat("A", 2<<20))
			default:
				if len(msg.ID) == 0 {
					continue
				}
				answer = fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":{}}`, msg.ID)
			}
			if _, err := io.WriteString(sw, answer+"\n"); err != nil {
				return
			}
		}
	}()
	c, err := Connect(testContext(t), &LineTransport{Reader: sr, Writer: cw}, WithMaxAnswerBytes(1<<20))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(testContext(t), 5*1e9)
	defer cancel()
	_, err = c.Resolve(ctx, llmtoolkit.Call{Name: "echo"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrAnswerTooLarge)
}
