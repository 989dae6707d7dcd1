package mcp

import (
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// DefaultMaxAnswerBytes is the most a [Client] reads of one message from
// its server unless [WithMaxAnswerBytes] says otherwise: 16 MiB, the Go
// SDK's own bound on a stdio line and an SSE event (a server of this
// package keeps every answer below it).
const DefaultMaxAnswerBytes = 16 << 20

// ErrAnswerTooLarge is wrapped by the error of a [Client] call (or of
// [Connect]) whose answer from the MCP server went past
// [WithMaxAnswerBytes]: the client stopped reading it and closed the
// connection, so every later call fails too; connect again.
var ErrAnswerTooLarge = errors.New("mcp: the MCP server's answer is past this client's bound")

// WithMaxAnswerBytes bounds each message a [Client] reads from its server
// (default [DefaultMaxAnswerBytes]), on every transport: a stdio line
// ([CommandTransport], [LineTransport], the SDK's command and io
// transports), an application/json answer or a server-sent event over
// HTTP ([HTTPTransport], the SDK's streamable and SSE client transports).
// Past it the client reads no further, closes the connection, and the call
// fails with an error wrapping [ErrAnswerTooLarge]; memory stays bounded
// by the limit whatever the server sends. Zero or less means the default.
// It has no effect on a server.
func WithMaxAnswerBytes(n int) Option { return func(c *config) { c.maxAnswerBytes = n } }

// answerBound is one client's bound on its server's messages, and the
// first time it was passed.
type answerBound struct {
	limit int64
	hit   atomic.Pointer[error]

	mu      sync.Mutex
	onHit   func() // closes the session, once Connect has one
	pending bool   // hit before onHit was set
}

// exceeded records that an answer went past the bound (over what
// transport) and closes the connection.
func (b *answerBound) exceeded(what string) error {
	err := fmt.Errorf("%w: %s is longer than the %s this client reads (raise WithMaxAnswerBytes if the server is trusted); the connection is closed",
		ErrAnswerTooLarge, what, textutil.HumanSize(b.limit))
	if b.hit.CompareAndSwap(nil, &err) {
		b.mu.Lock()
		fn := b.onHit
		b.pending = fn == nil
		b.mu.Unlock()
		if fn != nil {
			go fn()
		}
	}
	return *b.hit.Load()
}

// setOnHit sets what closes the connection; it runs at once if the bound
// was already passed.
func (b *answerBound) setOnHit(fn func()) {
	b.mu.Lock()
	b.onHit = fn
	run := b.pending
	b.mu.Unlock()
	if run {
		go fn()
	}
}

// wrap adds the bound's error to err when the bound was passed: the SDK
// reports the closed connection without it.
func (b *answerBound) wrap(err error) error {
	if err == nil || errors.Is(err, ErrAnswerTooLarge) {
		return err
	}
	hit := b.hit.Load()
	if hit == nil {
		return err
	}
	if strings.Contains(err.Error(), (*hit).Error()) {
		return tooLargeError{err} // the SDK's error says it already
	}
	return fmt.Errorf("%w (%w)", *hit, err)
}

// tooLargeError is an SDK error whose text already says that the bound
// was passed, made to wrap [ErrAnswerTooLarge].
type tooLargeError struct{ error }

func (e tooLargeError) Unwrap() []error { return []error{e.error, ErrAnswerTooLarge} }

// boundTransport returns transport with its server's messages bounded:
// the HTTP transports read through a bounding http.RoundTripper (and the
// SDK's own SSE bound set just above it, so that this one decides). The
// stdio transports are bounded by clientTransportFor.
func boundTransport(transport sdk.Transport, b *answerBound) sdk.Transport {
	switch t := transport.(type) {
	case *sdk.StreamableClientTransport:
		c := *t
		c.HTTPClient = boundHTTPClient(c.HTTPClient, b)
		c.MaxEventSize = sdkEventBound(b)
		return &c
	case *sdk.SSEClientTransport:
		c := *t
		c.HTTPClient = boundHTTPClient(c.HTTPClient, b)
		c.MaxEventSize = sdkEventBound(b)
		return &c
	}
	return transport
}

// sdkEventBound is the SDK's SSE bound: a little above ours, which counts
// the field names too.
func sdkEventBound(b *answerBound) int {
	return int(b.limit) + 64<<10
}

// lineBound is the line length of a client's LineTransport: the bound, or
// the transport's own when smaller.
func lineBound(own int, b *answerBound) int {
	if own > 0 && int64(own) < b.limit {
		return own
	}
	return int(b.limit)
}

func boundHTTPClient(hc *http.Client, b *answerBound) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	next := c.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	c.Transport = &boundingRoundTripper{next: next, bound: b}
	return &c
}

// boundingRoundTripper bounds the bodies of the server's answers: an
// event stream event by event, any other body whole.
type boundingRoundTripper struct {
	next  http.RoundTripper
	bound *answerBound
}

// RoundTrip implements [http.RoundTripper].
func (rt *boundingRoundTripper) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := rt.next.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	body := &boundedBody{rc: resp.Body, bound: rt.bound, sse: mt == "text/event-stream", atLineStart: true}
	if !body.sse && resp.ContentLength > rt.bound.limit {
		// Refused before a byte is read.
		body.err = rt.bound.exceeded(fmt.Sprintf("an answer of %s (its Content-Length)", textutil.HumanSize(resp.ContentLength)))
		_ = resp.Body.Close()
	}
	resp.Body = body
	return resp, nil
}

// boundedBody reads at most the bound of a body (of each event, for an
// event stream); past it, it closes the body and fails every read.
type boundedBody struct {
	rc    io.ReadCloser
	bound *answerBound
	sse   bool
	n     int64 // bytes of the body, or of the current event
	err   error

	atLineStart, afterCR bool // where an event stream's parser is
}

// Read implements [io.Reader].
func (b *boundedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	// Read one byte past the bound at most, to see that it is passed.
	if left := b.bound.limit - b.n + 1; !b.sse && int64(len(p)) > left {
		p = p[:left]
	}
	n, err := b.rc.Read(p)
	if b.sse {
		b.countEvents(p[:n])
	} else {
		b.n += int64(n)
	}
	if b.n > b.bound.limit {
		what := "an answer"
		if b.sse {
			what = "a server-sent event"
		}
		b.err = b.bound.exceeded(what)
		_ = b.rc.Close()
		return 0, b.err
	}
	return n, err
}

// countEvents counts the bytes of the current event, which a blank line
// ends ("\n\n", "\r\r", "\r\n\r\n").
func (b *boundedBody) countEvents(p []byte) {
	for _, c := range p {
		switch c {
		case '\r':
			if b.atLineStart {
				b.n = 0
			}
			b.atLineStart, b.afterCR = true, true
			continue
		case '\n':
			if b.afterCR {
				b.afterCR = false
				continue
			}
			if b.atLineStart {
				b.n = 0
			}
			b.atLineStart = true
			continue
		}
		b.atLineStart, b.afterCR = false, false
		b.n++
		if b.n > b.bound.limit {
			return
		}
	}
}

// Close implements [io.Closer].
func (b *boundedBody) Close() error { return b.rc.Close() }
