package codetools

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Issue 47, row 8: http_get tells text from binary by the body, as
// read_file does, never by the Content-Type: a page served as image/png is
// text (and, being HTML, converted), bytes with NULs served as text/plain
// are not.
func TestHTTPGetTextByContent(t *testing.T) {
	t.Parallel()
	page := `<html><head><title>T</title></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>`
	srv := newTestServer(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page-as-png":
			w.Header().Set("Content-Type", "image/png")
			fmt.Fprint(w, page)
		case "/text-as-video":
			w.Header().Set("Content-Type", "video/mp4")
			fmt.Fprint(w, "line one\nline two\n")
		case "/text-as-octets":
			w.Header().Set("Content-Type", "application/octet-stream")
			fmt.Fprint(w, "plain words")
		case "/binary-as-text":
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("ELF\x00\x01\x02\x00binary-tail"))
		case "/utf16":
			w.Header().Set("Content-Type", "text/plain; charset=utf-16le")
			_, _ = w.Write([]byte("h\x00i\x00 \x00t\x00h\x00e\x00r\x00e\x00"))
		case "/not-found-as-png":
			w.Header().Set("Content-Type", "image/png")
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, "<p>No such page</p>")
		}
	})
	ct := newTools(t, WithAllowPrivateNetworks())
	for _, tt := range []struct {
		path     string
		contains []string
		absent   []string
	}{
		{"/page-as-png", []string{"# Title", "**bold**"}, []string{"Binary content", "<h1>"}},
		{"/text-as-video", []string{"line one\nline two"}, []string{"Binary content"}},
		{"/text-as-octets", []string{"plain words"}, []string{"Binary content"}},
		{"/binary-as-text", []string{"Binary content"}, []string{"binary-tail"}},
		{"/utf16", []string{"hi there"}, []string{"Binary content"}},
	} {
		t.Run(tt.path, func(t *testing.T) {
			got, err := run(t, ct, "http_get", map[string]any{"url": srv.URL + tt.path})
			require.NoError(t, err)
			for _, s := range tt.contains {
				assert.Contains(t, got, s)
			}
			for _, s := range tt.absent {
				assert.NotContains(t, got, s)
			}
		})
	}
	_, err := run(t, ct, "http_get", map[string]any{"url": srv.URL + "/not-found-as-png"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "No such page", "an error page is text by its content too")
}
