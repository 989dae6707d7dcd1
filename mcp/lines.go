package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxIDLength bounds a request id: an answer repeats its id, and must fit in
// one frame with the result.
const maxIDLength = 4096

// maxErrorMessage bounds the message of an error answer to a malformed line.
const maxErrorMessage = 512

// LineTransport is a server transport for MCP over newline-delimited JSON
// on a reader and a writer, standard input and output by default (see
// [StdioTransport]).
//
// Unlike the SDK's StdioTransport and IOTransport, which end the session
// on the first line they cannot decode, it reads one line at a time and
// answers a line that is not a JSON-RPC message the server can handle with
// a JSON-RPC error, then goes on serving: invalid JSON with -32700 (parse
// error); a batch (an array: MCP does not use them since its 2025-06-18
// revision), a value that is not an object, a "jsonrpc" other than "2.0",
// an id that is not a string, a number or null (or is longer than 4096
// bytes), a method that is not a string, and a line longer than
// MaxLineLength with -32600 (invalid request). The answer carries the
// line's id when it is a valid one, null otherwise. Every such line is
// logged as a warning. Blank lines are skipped, and a line may end in
// "\r\n". Answers and the server's own messages are written one whole line
// at a time.
//
// A LineTransport is used for one session. When the session ends, Reader
// is closed if it is an [io.Closer] (as the SDK closes standard input), to
// stop the goroutine that reads it; Writer is not closed.
type LineTransport struct {
	// Reader is where messages come from; nil means os.Stdin.
	Reader io.Reader
	// Writer is where answers go; nil means os.Stdout.
	Writer io.Writer
	// MaxLineLength is the longest line accepted, in bytes; a longer line
	// is answered with an error without being held in memory. Zero or less
	// means the SDK's DefaultMaxLineLength (16 MiB).
	MaxLineLength int
	// Logger receives the warnings about malformed lines; nil means
	// slog.Default().
	Logger *slog.Logger

	closeWriter bool         // close Writer with the session (for an sdk.IOTransport)
	methods     extraMethods // requests the transport answers itself (the skills extension's)
	ext         *lineCaller  // a client's requests the SDK cannot send (the skills extension's)
	client      bool         // the client's end: see clientTransportFor
	bound       *answerBound // a client's bound: a longer line ends the session
	onClose     func() error // called last when the session ends (a command's exit)
}

// StdioTransport returns a [LineTransport] on the process's standard input
// and output: what a command that serves MCP (`llmtoolkit mcp`) passes to
// [Serve].
func StdioTransport() *LineTransport { return &LineTransport{} }

// Connect starts reading Reader and returns the session's connection; it
// implements [sdk.Transport].
func (t *LineTransport) Connect(context.Context) (sdk.Connection, error) {
	src, dst := t.Reader, t.Writer
	if src == nil {
		src = os.Stdin
	}
	if dst == nil {
		dst = os.Stdout
	}
	limit := t.MaxLineLength
	if limit <= 0 {
		limit = sdk.DefaultMaxLineLength
	}
	log := t.Logger
	if log == nil {
		log = slog.Default()
	}
	c := &lineConn{
		out:      &lockedWriter{w: dst},
		src:      src,
		incoming: make(chan jsonrpc.Message),
		done:     make(chan struct{}),
		closed:   make(chan struct{}),
	}
	if t.closeWriter {
		c.dst, _ = dst.(io.Closer)
	}
	c.onClose = t.onClose
	f := &lineFilter{src: src, conn: c, limit: limit, log: log, client: t.client, bound: t.bound, methods: t.methods, ext: t.ext}
	if t.ext != nil {
		t.ext.attach(c)
	}
	go f.run()
	return c, nil
}

// lockedWriter serializes whole-line writes: the session's messages and
// the filter's error answers.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

// lineConn is the session's connection: Read returns the messages the
// filter decoded, Write sends one message per line.
type lineConn struct {
	out *lockedWriter
	src io.Reader // closed with the connection when it is an io.Closer
	dst io.Closer // closed with the connection, when not nil

	incoming chan jsonrpc.Message
	done     chan struct{} // closed when the filter stops, after readErr is set
	readErr  error         // why the filter stopped: nil at the input's end

	closeOnce sync.Once
	closed    chan struct{}
	closeErr  error

	inFlight inFlight     // the client's requests not answered yet
	onClose  func() error // see LineTransport.onClose
}

// maxTracked bounds the requests a connection tracks for cancellation; the
// ones past it are answered even when cancelled.
const maxTracked = 1 << 16

// inFlight tracks the client's requests until they are answered, and
// which of them the client cancelled.
type inFlight struct {
	mu        sync.Mutex
	cancelled map[jsonrpc.ID]bool // request id → cancelled
}

// start records a request read from the client.
func (f *inFlight) start(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.cancelled == nil {
		f.cancelled = map[jsonrpc.ID]bool{}
	}
	if len(f.cancelled) < maxTracked {
		f.cancelled[id] = false
	}
}

// cancel marks a request the client cancelled, when it is in flight.
func (f *inFlight) cancel(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.cancelled[id]; ok {
		f.cancelled[id] = true
	}
}

// finish forgets a request being answered and reports whether it was
// cancelled.
func (f *inFlight) finish(id jsonrpc.ID) (cancelled bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	cancelled = f.cancelled[id]
	delete(f.cancelled, id)
	return cancelled
}

// observe notes what a message from the client means for the requests in
// flight: a request starts one, notifications/cancelled cancels one.
func (f *inFlight) observe(msg jsonrpc.Message) {
	req, ok := msg.(*jsonrpc.Request)
	if !ok {
		return
	}
	if req.ID.IsValid() {
		f.start(req.ID)
		return
	}
	if req.Method != "notifications/cancelled" {
		return
	}
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(req.Params, &p) != nil {
		return
	}
	if id, err := jsonrpc.MakeID(p.RequestID); err == nil && id.IsValid() {
		f.cancel(id)
	}
}

// Read returns the next good message; it implements [sdk.Connection].
func (c *lineConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case msg := <-c.incoming:
		return msg, nil
	case <-c.done:
		if c.readErr != nil {
			return nil, c.readErr
		}
		return nil, io.EOF
	case <-c.closed:
		return nil, io.EOF
	}
}

// Write sends msg on one line; it implements [sdk.Connection].
//
// The answer to a request the client cancelled is not sent: MCP's
// cancellation rule is that the receiver of notifications/cancelled SHOULD
// NOT answer the request (the SDK would answer it with an error of code 0,
// "context canceled", a code neither JSON-RPC nor MCP defines). Any other
// error answer of code 0 is sent with -32603 (internal error).
func (c *lineConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		if c.inFlight.finish(resp.ID) {
			return nil
		}
		var werr *jsonrpc.Error
		if resp.Error != nil && (!errors.As(resp.Error, &werr) || werr.Code == 0) {
			fixed := *resp
			fixed.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: resp.Error.Error()}
			msg = &fixed
		}
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return fmt.Errorf("mcp: encoding a message: %w", err)
	}
	_, err = c.out.Write(append(data, '\n'))
	return err
}

// Close ends the connection and closes the input (and the output when the
// transport owns it); it implements [sdk.Connection].
func (c *lineConn) Close() error {
	c.closeOnce.Do(func() {
		close(c.closed)
		if r, ok := c.src.(io.Closer); ok {
			c.closeErr = r.Close()
		}
		if c.dst != nil {
			c.closeErr = errors.Join(c.closeErr, c.dst.Close())
		}
		if c.onClose != nil {
			c.closeErr = errors.Join(c.closeErr, c.onClose())
		}
	})
	return c.closeErr
}

// SessionID is empty: a stream has one session.
func (c *lineConn) SessionID() string { return "" }

func (c *lineConn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// lineFilter reads the source line by line, answers malformed lines and
// hands the good messages to the connection.
type lineFilter struct {
	src     io.Reader
	conn    *lineConn
	limit   int
	log     *slog.Logger
	buf     []byte
	refused int
	client  bool         // reading a server's messages: see clientRefuse
	bound   *answerBound // a client's bound: a longer line ends the session
	methods extraMethods // requests answered here, not by the SDK
	ext     *lineCaller  // a client's own requests: their answers go to it
}

// extraMethods answers a request of a method the SDK does not know: ok is
// false for one it does not answer either.
type extraMethods func(ctx context.Context, method string, params json.RawMessage) (result any, rpcErr *jsonrpc.Error, ok bool)

// run is the filter's goroutine. It stops at the source's end or error,
// when the connection closes, or on its own panic, recovered: the session
// then ends with an error.
func (f *lineFilter) run() {
	defer close(f.conn.done)
	defer func() {
		if p := recover(); p != nil {
			f.log.Error("mcp: reading the input panicked; the session ends",
				slog.Any("panic", p), slog.String("stack", string(debug.Stack())))
			f.conn.readErr = fmt.Errorf("mcp: reading the input panicked: %v", p)
		}
	}()
	br := bufio.NewReaderSize(f.src, 64<<10)
	for {
		line, tooLong, readErr := f.readLine(br)
		if tooLong && f.bound != nil {
			// A client reads no further than its bound (WithMaxAnswerBytes).
			f.conn.readErr = f.bound.exceeded("a line from the MCP server")
			return
		}
		if readErr != nil && !errors.Is(readErr, io.EOF) {
			f.conn.readErr = fmt.Errorf("mcp: reading the input: %w", readErr)
			return
		}
		// A last line without its newline is a line too.
		if err := f.handle(line, tooLong); err != nil {
			f.conn.readErr = err
			return
		}
		if readErr != nil {
			return
		}
	}
}

// readLine reads the next line, without holding more than limit bytes of
// it: tooLong reports a longer line, read to its end and dropped.
func (f *lineFilter) readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	if cap(f.buf) > 1<<20 {
		f.buf = nil // do not keep a big line's buffer for the small ones
	}
	f.buf = f.buf[:0]
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			// Two more bytes for the line's end, "\r\n".
			if len(f.buf)+len(chunk) > f.limit+2 {
				tooLong, f.buf = true, f.buf[:0]
				if f.bound != nil {
					return nil, true, nil
				}
			} else {
				f.buf = append(f.buf, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return f.buf, tooLong, err
	}
}

// handle answers one line or hands its message on. An error ends the
// session: the connection or the output has gone.
func (f *lineFilter) handle(line []byte, tooLong bool) error {
	line = bytes.Trim(line, " \t\r\n")
	if tooLong || len(line) > f.limit {
		return f.refuse(nil, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: the line is longer than %d bytes, the most this server reads; send a smaller message", f.limit))
	}
	if len(line) == 0 {
		return nil
	}
	msg, code, id, text := checkMessage(line)
	if code != 0 {
		if f.client {
			return f.clientRefuse(line, id, code, text)
		}
		return f.refuse(id, code, text)
	}
	if req, ok := msg.(*jsonrpc.Request); ok && f.methods != nil && req.ID.IsValid() {
		if f.extra(req) {
			return nil
		}
	}
	if resp, ok := msg.(*jsonrpc.Response); ok && f.ext != nil && f.ext.deliver(resp) {
		return nil
	}
	f.conn.inFlight.observe(msg)
	select {
	case f.conn.incoming <- msg:
		return nil
	case <-f.conn.closed:
		return sdk.ErrConnectionClosed
	}
}

// extra answers req, in its own goroutine, when methods answers its
// method; it reports whether it does.
func (f *lineFilter) extra(req *jsonrpc.Request) bool {
	switch req.Method {
	case methodSkillsList, methodSkillsGet, methodDirectoryRead:
	default:
		return false
	}
	go func() {
		defer guard.Recover("mcp line extra method", nil, nil)
		// The answer is cancelled when the session ends.
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-f.conn.closed:
				cancel()
			case <-ctx.Done():
			}
		}()
		result, rpcErr, _ := f.methods(ctx, req.Method, req.Params)
		resp := &jsonrpc.Response{ID: req.ID}
		if rpcErr != nil {
			resp.Error = rpcErr
		} else if data, err := json.Marshal(result); err != nil {
			resp.Error = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the answer cannot be encoded"}
		} else {
			resp.Result = data
		}
		if err := f.conn.Write(ctx, resp); err != nil {
			f.log.Warn("mcp: answer not sent", slog.String("method", req.Method), slog.Any("error", err))
		}
	}()
	return true
}

// refuse answers a malformed line with a JSON-RPC error and logs it.
func (f *lineFilter) refuse(id json.RawMessage, code int64, msg string) error {
	f.refused++
	f.log.Warn("mcp: malformed message answered with an error",
		slog.Int64("code", code), slog.String("error", msg), slog.Int("refused_so_far", f.refused))
	if f.conn.isClosed() {
		return sdk.ErrConnectionClosed
	}
	if _, err := f.conn.out.Write(errorAnswer(id, code, msg)); err != nil {
		return fmt.Errorf("mcp: answering a malformed message: %w", err)
	}
	return nil
}

// clientRefuse handles a malformed line from a server, on a client's end.
// A line with a valid id and no method is an answer: the request it
// answers fails with a JSON-RPC error saying the answer was malformed. A
// line with an id and a method is a request: it is answered with the
// error, as a server does. Any other line is dropped. Each is logged as a
// warning, and the session goes on.
func (f *lineFilter) clientRefuse(line []byte, id json.RawMessage, code int64, text string) error {
	var head messageHead
	_ = json.Unmarshal(line, &head)
	if len(id) > 0 && len(head.Method) > 0 {
		return f.refuse(id, code, text)
	}
	f.refused++
	f.log.Warn("mcp: malformed message from the MCP server ignored",
		slog.Int64("code", code), slog.String("error", text), slog.Int("refused_so_far", f.refused))
	if len(id) == 0 {
		return nil
	}
	var raw any
	if json.Unmarshal(id, &raw) != nil {
		return nil
	}
	rid, err := jsonrpc.MakeID(raw)
	if err != nil || !rid.IsValid() {
		return nil
	}
	answer := &jsonrpc.Response{ID: rid, Error: &jsonrpc.Error{Code: code,
		Message: "the MCP server sent a malformed answer: " + textutil.CutUTF8(text, maxErrorMessage)}}
	select {
	case f.conn.incoming <- answer:
		return nil
	case <-f.conn.closed:
		return sdk.ErrConnectionClosed
	}
}

// messageHead is what checkMessage reads of a message.
type messageHead struct {
	JSONRPC json.RawMessage `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
}

// checkMessage decodes line (not empty, trimmed) as one JSON-RPC message
// the SDK can handle. When it is not one, code is the JSON-RPC error code,
// id the line's id when it is a valid one, and text says what is wrong and
// what to send instead.
func checkMessage(line []byte) (msg jsonrpc.Message, code int64, id json.RawMessage, text string) {
	var head messageHead
	err := json.Unmarshal(line, &head)
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return nil, jsonrpc.CodeParseError, nil, fmt.Sprintf("parse error: the line is not one JSON value (%v); send one JSON-RPC message per line", err)
	}
	switch {
	case line[0] == '[':
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: JSON-RPC batches are not supported; send one message per line"
	case line[0] != '{':
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: a JSON-RPC message must be a JSON object"
	case err != nil:
		return nil, jsonrpc.CodeInvalidRequest, nil, "invalid request: " + err.Error()
	}
	switch id = head.ID; {
	case len(id) == 0 || string(id) == "null":
		id = nil
	case len(id) > maxIDLength:
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf("invalid request: the id is longer than %d bytes", maxIDLength)
	case id[0] != '"' && id[0] != '-' && (id[0] < '0' || id[0] > '9'):
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf(`invalid request: "id" must be a string, a number or null, not %s`, jsonKind(id))
	case id[0] != '"' && json.Unmarshal(id, new(float64)) != nil:
		return nil, jsonrpc.CodeInvalidRequest, nil, fmt.Sprintf(`invalid request: the id %.40s is out of range`, id)
	}
	var version string
	switch {
	case len(head.JSONRPC) == 0:
		return nil, jsonrpc.CodeInvalidRequest, id, `invalid request: "jsonrpc": "2.0" is missing`
	case json.Unmarshal(head.JSONRPC, &version) != nil:
		return nil, jsonrpc.CodeInvalidRequest, id, fmt.Sprintf(`invalid request: "jsonrpc" must be the string "2.0", not %s`, jsonKind(head.JSONRPC))
	case version != "2.0":
		return nil, jsonrpc.CodeInvalidRequest, id, fmt.Sprintf(`invalid request: "jsonrpc" must be "2.0", not %q`, textutil.CutUTF8(version, 40))
	}
	switch {
	case len(head.Method) > 0 && head.Method[0] != '"':
		return nil, jsonrpc.CodeInvalidRequest, id, fmt.Sprintf(`invalid request: "method" must be a string, not %s`, jsonKind(head.Method))
	case len(head.Method) == 0 && id == nil:
		return nil, jsonrpc.CodeInvalidRequest, nil, `invalid request: a message needs a "method" (a request or notification) or an "id" (a response)`
	}
	// The SDK's own decoding is the last word (it also bounds the nesting
	// depth).
	msg, err = jsonrpc.DecodeMessage(line)
	if err != nil {
		return nil, jsonrpc.CodeInvalidRequest, id, "invalid request: " + err.Error()
	}
	return msg, 0, nil, ""
}

// jsonKind names the kind of a JSON value for an error message.
func jsonKind(v json.RawMessage) string {
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	default:
		return "a number"
	}
}

// errorAnswer is the JSON-RPC error answer to a malformed line, with its
// newline; a nil id is sent as null.
func errorAnswer(id json.RawMessage, code int64, msg string) []byte {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: code, Message: textutil.CutUTF8(msg, maxErrorMessage)}})
	if err != nil { // an id checkMessage let through is valid JSON
		data = fmt.Appendf(nil, `{"jsonrpc":"2.0","id":null,"error":{"code":%d,"message":"invalid request"}}`, code)
	}
	return append(data, '\n')
}
