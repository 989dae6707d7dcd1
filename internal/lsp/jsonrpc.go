package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// ErrClosed is returned by calls on a connection whose peer has gone (its
// output ended, it sent a frame past the limit, or the connection was
// closed).
var ErrClosed = errors.New("lsp: connection closed")

// ErrFrameTooLarge is the reason a connection ends when the server sends
// a message larger than the frame limit.
var ErrFrameTooLarge = errors.New("lsp: message larger than the frame limit")

// maxHeaderLine bounds one header line of a frame.
const maxHeaderLine = 4 << 10

// message is one JSON-RPC 2.0 message, in whichever of its forms.
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is an error a server answered a request with.
type RPCError struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

func (e *RPCError) Error() string { return fmt.Sprintf("lsp: server error %d: %s", e.Code, e.Message) }

// handlerFunc answers what the server sends: a notification (id nil, the
// answer is ignored) or a request (the answer is sent back).
type handlerFunc func(method string, params json.RawMessage) (any, error)

// conn is JSON-RPC 2.0 over LSP's base protocol (Content-Length framed),
// written by hand: every frame the peer sends is bounded before it is read
// whole, and the reader is one guarded goroutine.
type conn struct {
	w        io.Writer
	wmu      sync.Mutex
	maxFrame int64
	handle   handlerFunc

	nextID  atomic.Int64
	mu      sync.Mutex
	pending map[int64]chan *message
	err     error         // why the connection ended
	done    chan struct{} // closed when the reader ends
}

func newConn(r io.Reader, w io.Writer, maxFrame int64, handle handlerFunc) *conn {
	c := &conn{w: w, maxFrame: maxFrame, handle: handle, pending: map[int64]chan *message{}, done: make(chan struct{})}
	go func() {
		err := <-guard.Go("lsp reader", func() error { return c.read(bufio.NewReaderSize(r, 64<<10)) }, nil)
		c.mu.Lock()
		if c.err == nil {
			c.err = err
		}
		for id, ch := range c.pending {
			close(ch)
			delete(c.pending, id)
		}
		c.mu.Unlock()
		close(c.done)
	}()
	return c
}

// Err returns why the connection ended (ErrClosed wrapping the cause), or
// nil while it runs.
func (c *conn) Err() error {
	select {
	case <-c.done:
	default:
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil || errors.Is(c.err, io.EOF) {
		return ErrClosed
	}
	return fmt.Errorf("%w: %w", ErrClosed, c.err)
}

// read reads frames until the peer's output ends or misbehaves.
func (c *conn) read(r *bufio.Reader) error {
	for {
		n, err := readHeader(r, c.maxFrame)
		if err != nil {
			return err
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(r, body); err != nil {
			return err
		}
		var m message
		if err := json.Unmarshal(body, &m); err != nil {
			continue // one bad message does not end the session
		}
		c.dispatch(&m)
	}
}

// readHeader reads a frame's header and returns its Content-Length, which
// must be at most limit.
func readHeader(r *bufio.Reader, limit int64) (int64, error) {
	n := int64(-1)
	for {
		line, err := readLine(r)
		if err != nil {
			return 0, err
		}
		if line == "" {
			if n < 0 {
				return 0, errors.New("lsp: frame without Content-Length")
			}
			return n, nil
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			continue
		}
		v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("lsp: bad Content-Length %q", value)
		}
		if v > limit {
			return 0, fmt.Errorf("%w (%d bytes, limit %d)", ErrFrameTooLarge, v, limit)
		}
		n = v
	}
}

// readLine reads one header line of at most maxHeaderLine bytes, without
// its line ending.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		chunk, isPrefix, err := r.ReadLine()
		if err != nil {
			return "", err
		}
		b = append(b, chunk...)
		if len(b) > maxHeaderLine {
			return "", errors.New("lsp: header line too long")
		}
		if !isPrefix {
			return string(b), nil
		}
	}
}

func (c *conn) dispatch(m *message) {
	if m.Method == "" { // a response
		id, err := strconv.ParseInt(string(m.ID), 10, 64)
		if err != nil {
			return
		}
		c.mu.Lock()
		ch, ok := c.pending[id]
		delete(c.pending, id)
		c.mu.Unlock()
		if ok {
			ch <- m
		}
		return
	}
	result, err := c.handle(m.Method, m.Params)
	if len(m.ID) == 0 || string(m.ID) == "null" {
		return // a notification
	}
	reply := message{JSONRPC: "2.0", ID: m.ID}
	if err != nil {
		reply.Error = &RPCError{Code: -32601, Message: err.Error()}
	} else {
		data, merr := json.Marshal(result)
		if merr != nil {
			data = []byte("null")
		}
		reply.Result = data
	}
	// Answer from another goroutine: a server that does not read its
	// input must not stop this reader.
	spawn("lsp reply", func() { _ = c.write(&reply) })
}

// write sends one message.
func (c *conn) write(m *message) error {
	m.JSONRPC = "2.0"
	data, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if _, err := fmt.Fprintf(c.w, "Content-Length: %d\r\n\r\n", len(data)); err != nil {
		return err
	}
	_, err = c.w.Write(data)
	return err
}

// Notify sends a notification, waiting for the write at most until ctx
// ends (a server that stops reading its input cannot hold the caller).
func (c *conn) Notify(ctx context.Context, method string, params any) error {
	if err := c.Err(); err != nil {
		return err
	}
	data, err := json.Marshal(params)
	if err != nil {
		return err
	}
	werr := make(chan error, 1)
	spawn("lsp notify", func() { werr <- c.write(&message{Method: method, Params: data}) })
	select {
	case err := <-werr:
		if err != nil {
			return fmt.Errorf("lsp: send %s: %w", method, err)
		}
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Call sends a request and decodes its result into out (which may be
// nil), waiting until the answer, ctx's end or the connection's end. A
// request abandoned by ctx is cancelled at the server ($/cancelRequest).
func (c *conn) Call(ctx context.Context, method string, params, out any) error {
	data, err := json.Marshal(params)
	if err != nil {
		return err
	}
	id := c.nextID.Add(1)
	ch := make(chan *message, 1)
	c.mu.Lock()
	if c.err != nil || isClosed(c.done) {
		c.mu.Unlock()
		return c.Err()
	}
	c.pending[id] = ch
	c.mu.Unlock()
	raw := json.RawMessage(strconv.FormatInt(id, 10))
	// The write goes through a goroutine: a server that stops reading
	// its input blocks the write, never the caller past ctx.
	werr := make(chan error, 1)
	spawn("lsp write", func() { werr <- c.write(&message{ID: raw, Method: method, Params: data}) })
	select {
	case err := <-werr:
		if err != nil {
			c.forget(id)
			return fmt.Errorf("lsp: send %s: %w", method, err)
		}
	case <-ctx.Done():
		c.forget(id)
		return ctx.Err()
	}
	select {
	case m, ok := <-ch:
		if !ok {
			return c.Err()
		}
		if m.Error != nil {
			return m.Error
		}
		if out == nil || len(m.Result) == 0 {
			return nil
		}
		return json.Unmarshal(m.Result, out)
	case <-ctx.Done():
		c.forget(id)
		spawn("lsp cancel", func() {
			_ = c.write(&message{Method: "$/cancelRequest", Params: json.RawMessage(`{"id":` + strconv.FormatInt(id, 10) + `}`)})
		})
		return ctx.Err()
	case <-c.done:
		return c.Err()
	}
}

func (c *conn) forget(id int64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// spawn runs fn in a goroutine whose panic is recovered and logged.
func spawn(what string, fn func()) {
	go func() {
		defer guard.Recover(what, nil, nil)
		fn()
	}()
}
