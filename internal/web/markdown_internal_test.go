package web

import (
	"context"
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
	"golang.org/x/net/html"
)

// TestPageMarkdownStopsWhenCancelled cancels a conversion under way, and
// one whose context has already ended.
func TestPageMarkdownStopsWhenCancelled(t *testing.T) {
	page := testkit.HostilePage("deep-quote", 2<<20)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	start := time.Now()
	_, _, _, err := Markdown(ctx, page, "http://example.com", len(page), nil)
	require.ErrorIs(t, err, context.Canceled)
	assert.Less(t, time.Since(start), 2*time.Second)

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, _, _, err := Markdown(ctx, page, "http://example.com", len(page), nil)
		done <- err
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	start = time.Now()
	select {
	case err := <-done:
		if err != nil { // it may have finished before the cancellation
			assert.ErrorIs(t, err, context.Canceled)
		}
		assert.Less(t, time.Since(start), 2*time.Second)
	case <-time.After(30 * time.Second):
		t.Fatal("Markdown went on after its context was cancelled")
	}
}

// TestPageMarkdownBudget converts hostile pages in process, with maxBytes
// far below their Markdown: the Markdown returned stays within the budget,
// and a note says what was done.
func TestPageMarkdownBudget(t *testing.T) {
	const maxBytes = 16 << 10
	for _, kind := range []string{"empty-links", "host-links", "deep-list", "deep-quote", "text-comments", "spans"} {
		t.Run(kind, func(t *testing.T) {
			page := testkit.HostilePage(kind, 256<<10)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			md, cut, note, err := Markdown(ctx, page, "http://"+strings.Repeat("h", 200)+".example", maxBytes, nil)
			require.NoError(t, err)
			t.Logf("%d bytes; %s", len(md), note)
			if strings.HasPrefix(note, "Shown as plain text") { // the page's text, at most its size
				assert.LessOrEqual(t, len(md), len(page))
				return
			}
			assert.LessOrEqual(t, len(md), 2*maxBytes+markdownSlack)
			if cut {
				assert.Contains(t, note, "Markdown of the first")
			}
		})
	}
}

// TestPageMarkdownMatchesConverter: on ordinary pages the guarded
// conversion gives exactly what the converter gives alone.
func TestPageMarkdownMatchesConverter(t *testing.T) {
	pages := map[string]string{
		"small": `<html><head><title>T</title><style>p{}</style></head><body><h1>Title</h1><p>Some <b>bold</b> text and <a href="/x">a link</a>.</p><!-- c --><p>a<!-- x -->b<script>s()</script>c</p><ul><li>one<ul><li>two</li></ul></li></ul><blockquote>q<br>r</blockquote><pre><code>code</code></pre></body></html>`,
		"deep":  strings.Repeat("<div><blockquote><ul><li>", 15) + "x<br>y" + strings.Repeat("</li></ul></blockquote></div>", 15),
	}
	if b, err := os.ReadFile(filepath.Join(build.Default.GOROOT, "doc", "go_spec.html")); err == nil {
		pages["go_spec.html"] = string(b)
	}
	for name, page := range pages {
		t.Run(name, func(t *testing.T) {
			want, err := htmltomarkdown.ConvertString(page, converter.WithDomain("https://go.dev"))
			require.NoError(t, err)
			got, cut, note, err := Markdown(context.Background(), page, "https://go.dev", 1<<20, nil)
			require.NoError(t, err)
			assert.False(t, cut)
			assert.Empty(t, note)
			assert.Equal(t, want, got)
		})
	}
}

// FuzzPageMarkdown: on any page nested no deeper than markdownMaxDepth,
// Markdown gives what the converter gives alone, and never panics.
func FuzzPageMarkdown(f *testing.F) {
	for _, seed := range []string{
		"<p>a<!---->b</p>", "<a></a><a href=x>y</a>", "<ul><li>x<ul><li>y", "<blockquote>q<br>r",
		"<table><tr><td>a<td>b</table>", "<pre>x\n\ny</pre>", "<b><i>x</b>y</i>", "<p>x<script>y</script>z<style>w</style>v",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, page string) {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			return
		}
		if depth := treeDepth(doc); depth > markdownMaxDepth {
			return
		}
		want, wantErr := htmltomarkdown.ConvertString(page, converter.WithDomain("http://h"))
		got, _, note, err := Markdown(context.Background(), page, "http://h", 1<<20, nil)
		require.NoError(t, err)
		if wantErr == nil && note == "" {
			assert.Equal(t, want, got)
		}
	})
}

func treeDepth(n *html.Node) int {
	depth := 0
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		depth = max(depth, treeDepth(c))
	}
	return depth + 1
}
