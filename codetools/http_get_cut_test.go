package codetools

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHTTPGetShortBodyIsMarkedCut: a body that ends before its
// Content-Length, or that is still arriving at the HTTP timeout, is never
// answered as a whole page: the answer and the Display say it was cut, and
// why (issue 28, row 11).
func TestHTTPGetShortBodyIsMarkedCut(t *testing.T) {
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/short", "/short-html":
			ctype := "text/plain"
			if r.URL.Path == "/short-html" {
				ctype = "text/html"
			}
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Content-Length", "1000")
			w.Write([]byte("fourteen bytes"))
			// The handler returns: the server closes the connection
			// after a short body.
		case "/trickle", "/trickle-html":
			w.Header().Set("Content-Type", "text/plain")
			if r.URL.Path == "/trickle-html" {
				w.Header().Set("Content-Type", "text/html")
			}
			for r.Context().Err() == nil {
				if _, err := w.Write([]byte("tick\n")); err != nil {
					return
				}
				w.(http.Flusher).Flush()
				time.Sleep(50 * time.Millisecond)
			}
		}
	})
	ct := newTools(t, WithAllowPrivateNetworks(), WithHTTPTimeout(time.Second))
	for _, tt := range []struct {
		path    string
		reason  string
		content string
	}{
		{"/short", "unexpected EOF", "fourteen bytes"},
		{"/short-html", "unexpected EOF", "fourteen bytes"},
		{"/trickle", "deadline", "tick"},
	} {
		t.Run(tt.path, func(t *testing.T) {
			start := time.Now()
			res := execute(ct, "http_get", map[string]any{"url": srv.URL + tt.path})
			assert.Less(t, time.Since(start), 5*time.Second)
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, tt.content)
			assert.NotContains(t, res.Content, "· 1000B", "the announced size is not shown as received")
			assert.Contains(t, res.Content, "[cut: the body stopped", "the answer says it was cut")
			assert.Contains(t, res.Content, tt.reason, "the read error is kept")
			assert.True(t, strings.HasSuffix(res.Content, "]"), res.Content)
			assert.True(t, payloadOf[WebpagePayload](t, res, DisplayWebpage).Truncated)
			t.Log(res.Content)
		})
	}
	// An HTML page still arriving at the timeout leaves no time to convert
	// it: an error that says so, never a page shown whole.
	start := time.Now()
	_, err := run(t, ct, "http_get", map[string]any{"url": srv.URL + "/trickle-html"})
	assert.Less(t, time.Since(start), 5*time.Second)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "still arriving at the HTTP timeout")
}
