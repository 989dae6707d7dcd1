package web_test

import (
	"bytes"
	"context"
	"log/slog"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

const page = `<html><head><title>T</title><script>x()</script></head><body><h1>Title</h1>` +
	`<p>Some <b>bold</b> text and <a href="/x">a link</a>.</p><ul><li>one</li><li>two</li></ul></body></html>`

func TestMarkdown(t *testing.T) {
	md, cut, note, err := web.Markdown(context.Background(), page, "https://example.com", 1<<20, nil)
	require.NoError(t, err)
	assert.False(t, cut)
	assert.Empty(t, note)
	assert.Equal(t, "# Title\n\nSome **bold** text and [a link](https://example.com/x).\n\n- one\n- two", md)
}

func TestText(t *testing.T) {
	text, err := web.Text(context.Background(), page)
	require.NoError(t, err)
	assert.Equal(t, "T\nTitle\n\nSome bold text and a link.\n\none\n\ntwo", text)
}

// panicCtx panics on the at-th call of Err: the conversion checks its
// context all along, so a panic there stands for a bug in the converter.
// Calls from the HTML parser do not count: it recovers its own panics.
type panicCtx struct {
	context.Context
	calls, at int32
}

func (c *panicCtx) Err() error {
	if strings.Contains(string(debug.Stack()), "golang.org/x/net/html.Parse") {
		return c.Context.Err()
	}
	if atomic.AddInt32(&c.calls, 1) == c.at {
		panic("boom in the conversion")
	}
	return c.Context.Err()
}

// A panic anywhere in the conversion is logged with its stack (issue 26:
// one inside the converter became a plain error, without stack or log),
// and never escapes: the page is shown as text, or the error says panic.
func TestMarkdownPanicIsLoggedWithItsStack(t *testing.T) {
	var log bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&log, nil)))
	t.Cleanup(func() { slog.SetDefault(old) })
	sawText := false
	for at := int32(1); ; at++ {
		log.Reset()
		ctx := &panicCtx{Context: context.Background(), at: at}
		md, _, note, err := web.Markdown(ctx, page, "https://example.com", 1<<20, nil)
		if atomic.LoadInt32(&ctx.calls) < at {
			break // no panic: every check is covered
		}
		out := log.String()
		assert.Contains(t, out, "goroutine panicked", "panic at check %d not logged", at)
		assert.Contains(t, out, "boom in the conversion")
		assert.Contains(t, out, "panicCtx", "the log holds the stack of the panic")
		if err != nil {
			var ge *guard.Error
			require.ErrorAs(t, err, &ge, "check %d", at)
			assert.Contains(t, string(ge.Stack), "panicCtx")
			continue
		}
		assert.True(t, strings.HasPrefix(note, "Shown as plain text: the conversion to Markdown failed (panic: boom in the conversion)"), "check %d: %q", at, note)
		assert.Contains(t, md, "Some bold text")
		sawText = true
	}
	assert.True(t, sawText, "some panic happened inside the converter")
}
