package codetools

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func p2Server(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func TestHTTPGetFormats(t *testing.T) {
	var gotUA string
	srv := p2Server(t, func(w http.ResponseWriter, r *http.Request) {
		gotUA = r.UserAgent()
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1><p>Some <b>bold</b> text and <a href="/x">a link</a>.</p><script>evil()</script></body></html>`)
		case "/plain":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "just text")
		case "/latin1":
			w.Header().Set("Content-Type", "text/plain; charset=iso-8859-1")
			w.Write([]byte("caf\xe9"))
		case "/image":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00binary"))
		case "/redirect":
			http.Redirect(w, r, "/plain", http.StatusFound)
		case "/missing":
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<p>No such page</p>")
		}
	})
	ct := p2Tools(t, WithAllowPrivateNetworks())
	tests := []struct {
		name, path, format string
		contains           []string
		absent             []string
	}{
		{"markdown", "/page", "", []string{"HTTP 200 OK · text/html; charset=utf-8 · ", "# Title", "**bold**", "[a link](" + srv.URL + "/x)"}, []string{"evil", "<p>"}},
		{"text", "/page", "text", []string{"Title", "Some bold text and a link."}, []string{"evil", "<b>", "**"}},
		{"raw", "/page", "raw", []string{"<h1>Title</h1>"}, nil},
		{"plain", "/plain", "", []string{"HTTP 200 OK · text/plain · 9B\n\njust text"}, nil},
		{"charset", "/latin1", "", []string{"café"}, nil},
		{"binary described", "/image", "", []string{"Binary content (image/png, 16B) is not shown"}, []string{"PNG"}},
		{"redirect followed", "/redirect", "", []string{"just text", "from " + srv.URL + "/plain"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{"url": srv.URL + tt.path}
			if tt.format != "" {
				args["format"] = tt.format
			}
			got, err := p2Call(t, ct, "http_get", args)
			require.NoError(t, err)
			for _, s := range tt.contains {
				assert.Contains(t, got, s)
			}
			for _, s := range tt.absent {
				assert.NotContains(t, got, s)
			}
		})
	}
	assert.Equal(t, "llmtoolkit/"+version, gotUA)

	_, err := p2Call(t, ct, "http_get", map[string]any{"url": srv.URL + "/missing"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "HTTP 404 Not Found")
	assert.Contains(t, err.Error(), "No such page")

	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": srv.URL + "/plain"}})
	require.False(t, res.IsError, res.Content)
	require.NotNil(t, res.Display)
	assert.Equal(t, "webpage", res.Display.Kind)
	assert.Equal(t, 200, res.Display.Payload["status"])
	assert.Equal(t, false, res.Display.Payload["truncated"])
}

func TestHTTPGetEndlessBodyIsCut(t *testing.T) {
	srv := p2Server(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		line := []byte(strings.Repeat("x", 1023) + "\n")
		for r.Context().Err() == nil {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
	})
	ct := p2Tools(t, WithAllowPrivateNetworks())
	got, err := p2Call(t, ct, "http_get", map[string]any{"url": srv.URL, "maxBytes": 5000})
	require.NoError(t, err)
	assert.True(t, strings.HasSuffix(got, "\n\n[truncated at 5000 bytes]"), got[max(0, len(got)-100):])
	assert.Contains(t, got, "more than 4.9KB")
	assert.Less(t, len(got), 5200)
}

func TestHTTPGetGuard(t *testing.T) {
	srv := p2Server(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "secret") })
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	hop := p2Server(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://127.0.0.1:"+port+"/", http.StatusFound)
	})
	hopPort := hop.URL[strings.LastIndexByte(hop.URL, ':')+1:]

	ct := p2Tools(t) // guard on
	for _, u := range []string{srv.URL, "http://localhost:" + port + "/", "http://[::1]:" + port + "/"} {
		_, err := p2Call(t, ct, "http_get", map[string]any{"url": u})
		require.Error(t, err, u)
		assert.ErrorIs(t, err, ErrBlockedAddress, u)
		assert.Contains(t, err.Error(), "loopback")
	}

	// "localhost" is allowed by name; the redirect to 127.0.0.1 is not.
	ct = p2Tools(t, WithAllowedHosts("localhost"))
	_, err := p2Call(t, ct, "http_get", map[string]any{"url": "http://localhost:" + hopPort + "/"})
	require.Error(t, err)
	assert.ErrorIs(t, err, ErrBlockedAddress)

	got, err := p2Call(t, ct, "http_get", map[string]any{"url": "http://localhost:" + port + "/"})
	require.NoError(t, err)
	assert.Contains(t, got, "secret")

	ct = p2Tools(t, WithAllowPrivateNetworks())
	got, err = p2Call(t, ct, "http_get", map[string]any{"url": hop.URL})
	require.NoError(t, err)
	assert.Contains(t, got, "secret")
}

func TestHTTPGetErrors(t *testing.T) {
	ct := p2Tools(t, WithAllowPrivateNetworks(), WithHTTPTimeout(time.Second))
	for _, tt := range []struct{ url, want string }{
		{"ftp://example.com/", "only http:// and https://"},
		{"file:///etc/passwd", "only http:// and https://"},
		{"http://", "has no host"},
		{"::not a url", "not a valid URL"},
	} {
		_, err := p2Call(t, ct, "http_get", map[string]any{"url": tt.url})
		require.Error(t, err, tt.url)
		assert.Contains(t, err.Error(), tt.want)
	}
	_, err := p2Call(t, ct, "http_get", map[string]any{"url": "http://x", "format": "pdf"})
	assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments)

	loop := 0
	srv := p2Server(t, func(w http.ResponseWriter, r *http.Request) {
		loop++
		http.Redirect(w, r, fmt.Sprintf("/r%d", loop), http.StatusFound)
	})
	_, err = p2Call(t, ct, "http_get", map[string]any{"url": srv.URL})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stopped after 5 redirects")

	slow := p2Server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	_, err = p2Call(t, ct, "http_get", map[string]any{"url": slow.URL})
	require.Error(t, err)
}
