package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// toolsCallRecorder records the headers and arguments of every tools/call
// request that reaches the HTTP server.
type toolsCallRecorder struct {
	mu    sync.Mutex
	calls []recordedCall
}

type recordedCall struct {
	header    http.Header
	arguments map[string]any
}

func (rec *toolsCallRecorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			var msg struct {
				Method string `json:"method"`
				Params struct {
					Arguments map[string]any `json:"arguments"`
				} `json:"params"`
			}
			if json.Unmarshal(body, &msg) == nil && msg.Method == "tools/call" {
				rec.mu.Lock()
				rec.calls = append(rec.calls, recordedCall{header: r.Header.Clone(), arguments: msg.Params.Arguments})
				rec.mu.Unlock()
			}
		}
		next.ServeHTTP(w, r)
	})
}

func (rec *toolsCallRecorder) take() []recordedCall {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	out := rec.calls
	rec.calls = nil
	return out
}

// TestClientParamHeadersNull: SEP-2243 says a client MUST omit the
// Mcp-Param header of an x-mcp-header parameter whose value is null, and
// send the call. A null for an optional property the schema does not let
// be null is the property left out: the call leaves without it (no
// header, no null in the body the server validates). A null for a
// required property, or a wrong type, is refused before anything leaves.
func TestClientParamHeadersNull(t *testing.T) {
	t.Parallel()
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"region":  map[string]any{"type": "string", "x-mcp-header": "Region"},
			"verbose": map[string]any{"type": "boolean", "x-mcp-header": "Verbose"},
			"query":   map[string]any{"type": "string"},
		},
		"required": []any{"region", "query"},
	}
	tool, err := llmtoolkit.NewTool("run_query", "Runs a query in a region.", schema)
	require.NoError(t, err)
	var (
		mu       sync.Mutex
		received []map[string]any
	)
	remote := &llmtoolkittest.Fake{}
	remote.Add(tool, func(_ context.Context, c llmtoolkit.Call) (string, error) {
		mu.Lock()
		received = append(received, c.Arguments)
		mu.Unlock()
		return "done", nil
	})
	rec := &toolsCallRecorder{}
	ts := httptest.NewServer(rec.wrap(Handler(remote, WithName("headers"))))
	t.Cleanup(ts.Close)
	c, err := Connect(testContext(t), HTTPTransport(ts.URL, ts.Client()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	tests := []struct {
		name       string
		args       string
		wantSent   string            // the arguments in the request body, as JSON ("" when refused)
		wantHeader map[string]string // the Mcp-Param headers sent
		refused    string
	}{
		{
			name:       "values are mirrored",
			args:       `{"region":"us-west1","verbose":false,"query":"SELECT 1"}`,
			wantSent:   `{"region":"us-west1","verbose":false,"query":"SELECT 1"}`,
			wantHeader: map[string]string{"Region": "us-west1", "Verbose": "false"},
		},
		{
			name:       "optional null is left out, header omitted",
			args:       `{"region":"us-east1","verbose":null,"query":"SELECT 1"}`,
			wantSent:   `{"region":"us-east1","query":"SELECT 1"}`,
			wantHeader: map[string]string{"Region": "us-east1"},
		},
		{
			name:    "required null is refused",
			args:    `{"region":null,"query":"SELECT 1"}`,
			refused: `invalid arguments for tool "run_query": /region: expected string, but got null`,
		},
		{
			name:    "wrong type is refused",
			args:    `{"region":"us-east1","verbose":"yes","query":"SELECT 1"}`,
			refused: `invalid arguments for tool "run_query": /verbose: expected boolean, but got string`,
		},
	}
	for _, tt := range tests {
		// Not parallel: the cases share the recorder.
		t.Run(tt.name, func(t *testing.T) {
			call, err := llmtoolkit.ParseCall("1", "run_query", tt.args)
			require.NoError(t, err)
			res := llmtoolkit.Execute(testContext(t), c, call)
			sent := rec.take()
			mu.Lock()
			got := received
			received = nil
			mu.Unlock()
			if tt.refused != "" {
				assert.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
				assert.Equal(t, tt.refused, res.Content)
				assert.Empty(t, sent, "a refused call never leaves")
				assert.Empty(t, got)
				return
			}
			require.False(t, res.IsError, res.Content)
			assert.Equal(t, "done", res.Content)
			require.Len(t, sent, 1)
			body, err := json.Marshal(sent[0].arguments)
			require.NoError(t, err)
			assert.JSONEq(t, tt.wantSent, string(body))
			assert.Equal(t, "tools/call", sent[0].header.Get("Mcp-Method"))
			assert.Equal(t, "run_query", sent[0].header.Get("Mcp-Name"))
			headers := map[string]string{}
			for _, name := range []string{"Region", "Verbose", "Query"} {
				if v := sent[0].header.Values("Mcp-Param-" + name); len(v) > 0 {
					headers[name] = v[0]
				}
			}
			assert.Equal(t, tt.wantHeader, headers)
			require.Len(t, got, 1, "the server ran the call")
			ran, err := json.Marshal(got[0])
			require.NoError(t, err)
			assert.JSONEq(t, tt.wantSent, string(ran))
		})
	}
}
