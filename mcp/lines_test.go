package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// rawSession is a line-level MCP client: it writes lines as they are given,
// malformed ones included, and reads the server's answers one line each.
type rawSession struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	done  chan error // the server's result, once it stops
}

// startRawSession runs serve (a server reading in and writing out) in a
// goroutine and returns the client end. When the server stops, its output is
// closed, so a missing answer fails the test at once instead of waiting.
func startRawSession(t *testing.T, serve func(in io.Reader, out io.Writer) error) *rawSession {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &rawSession{t: t, in: inW, lines: make(chan string, 16), done: make(chan error, 1)}
	go func() {
		err := serve(inR, outW)
		s.done <- err
		stopped := fmt.Errorf("the server stopped: %v", err)
		_ = inR.CloseWithError(stopped)
		_ = outW.CloseWithError(stopped)
	}()
	go readLines(outR, s.lines)
	t.Cleanup(func() { _ = inW.Close(); _ = outR.Close() })
	return s
}

// readLines sends each line of r to lines and closes lines at the end.
func readLines(r io.Reader, lines chan<- string) {
	defer close(lines)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	for sc.Scan() {
		lines <- sc.Text()
	}
}

// send writes line and its newline, failing the test when the server does
// not read it within the test timeout.
func (s *rawSession) send(line string) {
	s.t.Helper()
	s.write(line + "\n")
}

func (s *rawSession) write(data string) {
	s.t.Helper()
	written := make(chan error, 1)
	go func() {
		_, err := io.WriteString(s.in, data)
		written <- err
	}()
	select {
	case err := <-written:
		require.NoError(s.t, err, "writing %.80q", data)
	case <-time.After(testTimeout):
		_ = s.in.Close()
		s.t.Fatalf("the server does not read its input (writing %.80q)", data)
	}
}

// recv returns the next answer, failing the test when there is none within
// the test timeout.
func (s *rawSession) recv() map[string]any {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		require.True(s.t, ok, "the server closed its output instead of answering")
		var m map[string]any
		require.NoError(s.t, json.Unmarshal([]byte(line), &m), "answer %.200q", line)
		return m
	case <-time.After(testTimeout):
		s.t.Fatal("no answer from the server within the test timeout")
		return nil
	}
}

// initialize runs MCP's handshake.
func (s *rawSession) initialize() {
	s.t.Helper()
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	require.Contains(s.t, s.recv(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
}

// echo calls the echo tool and checks its answer.
func (s *rawSession) echo(id int, text string) {
	s.t.Helper()
	s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%q}}}`, id, text))
	ans := s.recv()
	require.Contains(s.t, ans, "result", "answer to echo %d: %v", id, ans)
	assert.Equal(s.t, float64(id), ans["id"])
	result := ans["result"].(map[string]any)
	assert.Equal(s.t, text, result["content"].([]any)[0].(map[string]any)["text"])
}

// end closes the server's input and waits for it to stop.
func (s *rawSession) end() error {
	s.t.Helper()
	require.NoError(s.t, s.in.Close())
	select {
	case err := <-s.done:
		return err
	case <-time.After(testTimeout):
		s.t.Fatal("the server did not stop when its input closed")
		return nil
	}
}

// badLine is a line that is not a JSON-RPC message the server can handle,
// and the error it must be answered with.
type badLine struct {
	name     string
	line     string
	wantCode float64
	wantID   any // nil when the id cannot be known
}

func badLines() []badLine {
	deep := strings.Repeat("[", 1500) + strings.Repeat("]", 1500)
	return []badLine{
		{name: "invalid JSON", line: `{"jsonrpc":"2.0","id":3,"method":`, wantCode: -32700},
		{name: "not JSON at all", line: `hello`, wantCode: -32700},
		{name: "two values on a line", line: `{"jsonrpc":"2.0","id":3,"method":"ping"} {}`, wantCode: -32700},
		{name: "trailing garbage", line: `{"jsonrpc":"2.0","id":3,"method":"ping"}x`, wantCode: -32700},
		{name: "batch array", line: `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, wantCode: -32600},
		{name: "empty batch", line: `[]`, wantCode: -32600},
		{name: "jsonrpc 1.0", line: `{"jsonrpc":"1.0","id":9,"method":"ping"}`, wantCode: -32600, wantID: float64(9)},
		{name: "jsonrpc missing", line: `{"id":"x","method":"ping"}`, wantCode: -32600, wantID: "x"},
		{name: "jsonrpc not a string", line: `{"jsonrpc":2,"id":9,"method":"ping"}`, wantCode: -32600, wantID: float64(9)},
		{name: "object as id", line: `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, wantCode: -32600},
		{name: "array as id", line: `{"jsonrpc":"2.0","id":[1],"method":"ping"}`, wantCode: -32600},
		{name: "boolean as id", line: `{"jsonrpc":"2.0","id":true,"method":"ping"}`, wantCode: -32600},
		{name: "id too long", line: `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 5000) + `","method":"ping"}`, wantCode: -32600},
		{name: "method not a string", line: `{"jsonrpc":"2.0","id":11,"method":5}`, wantCode: -32600, wantID: float64(11)},
		{name: "neither request nor response", line: `{"jsonrpc":"2.0"}`, wantCode: -32600},
		{name: "number", line: `42`, wantCode: -32600},
		{name: "string", line: `"ping"`, wantCode: -32600},
		{name: "null", line: `null`, wantCode: -32600},
		{name: "nested too deep", line: `{"jsonrpc":"2.0","id":12,"method":"ping","params":` + deep + `}`, wantCode: -32600, wantID: float64(12)},
		// The SDK answers these itself; they must not end the session either.
		{name: "unknown method", line: `{"jsonrpc":"2.0","id":20,"method":"nope"}`, wantCode: -32601, wantID: float64(20)},
		{name: "params not an object", line: `{"jsonrpc":"2.0","id":21,"method":"tools/call","params":5}`, wantCode: -32602, wantID: float64(21)},
	}
}

// TestServeAnswersMalformedLines sends each kind of malformed line between
// two good requests: the server answers it with the JSON-RPC error and goes
// on serving, and ends cleanly when its input closes.
func TestServeAnswersMalformedLines(t *testing.T) {
	t.Parallel()
	for _, tt := range badLines() {
		t.Run(tt.name, func(t *testing.T) {
			s := startRawSession(t, func(in io.Reader, out io.Writer) error {
				return Serve(testContext(t), fixture(t), &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
			})
			s.initialize()
			s.echo(1, "before")
			s.send(tt.line)
			assertRPCError(t, s.recv(), tt.wantCode, tt.wantID)
			s.echo(2, "after")
			require.NoError(t, s.end())
		})
	}
}

// assertRPCError checks a JSON-RPC error answer.
func assertRPCError(t *testing.T, ans map[string]any, code float64, id any) {
	t.Helper()
	require.Contains(t, ans, "error", "want a JSON-RPC error, got %v", ans)
	assert.Equal(t, "2.0", ans["jsonrpc"])
	require.Contains(t, ans, "id", "an error answer always has an id, null when unknown")
	assert.Equal(t, id, ans["id"])
	e := ans["error"].(map[string]any)
	assert.Equal(t, code, e["code"], "error %v", e)
	assert.NotEmpty(t, e["message"])
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// TestLineTransportRefusesLongLines answers a line longer than the limit
// without holding it in memory, and serves the next line.
func TestLineTransportRefusesLongLines(t *testing.T) {
	t.Parallel()
	const limit = 4096
	s := startRawSession(t, func(in io.Reader, out io.Writer) error {
		return Serve(testContext(t), fixture(t), &LineTransport{Reader: in, Writer: out, MaxLineLength: limit})
	})
	s.initialize()
	s.echo(1, "before")
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":"` + strings.Repeat("x", 3*limit) + `"}}}`)
	ans := s.recv()
	assertRPCError(t, ans, -32600, nil)
	assert.Contains(t, ans["error"].(map[string]any)["message"], "4096 bytes")
	s.echo(2, strings.Repeat("y", limit/2))
	require.NoError(t, s.end())
}

// TestLineTransportSkipsBlankLinesAndCRLF accepts Windows line ends and
// ignores empty lines, as the SDK's own transport does.
func TestLineTransportSkipsBlankLinesAndCRLF(t *testing.T) {
	t.Parallel()
	s := startRawSession(t, func(in io.Reader, out io.Writer) error {
		return Serve(testContext(t), fixture(t), &LineTransport{Reader: in, Writer: out})
	})
	s.initialize()
	s.send("")
	s.send("   \t")
	s.send(`{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\r")
	ans := s.recv()
	assert.Equal(t, float64(1), ans["id"])
	assert.Contains(t, ans, "result")
	s.echo(2, "after")
	require.NoError(t, s.end())
}

// TestLineTransportLastLineWithoutNewline reads a last message that has
// no final newline, then the input's end.
func TestLineTransportLastLineWithoutNewline(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	tr := &LineTransport{Reader: strings.NewReader("\r\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}`), Writer: &out}
	conn, err := tr.Connect(testContext(t))
	require.NoError(t, err)
	defer conn.Close()
	msg, err := conn.Read(testContext(t))
	require.NoError(t, err)
	req, ok := msg.(*jsonrpc.Request)
	require.True(t, ok, "got %T", msg)
	assert.Equal(t, "ping", req.Method)
	assert.Equal(t, int64(1), req.ID.Raw())
	_, err = conn.Read(testContext(t))
	assert.ErrorIs(t, err, io.EOF)
	assert.Empty(t, out.String(), "nothing to answer")
}

// TestLineTransportReadError ends the session with the input's error.
func TestLineTransportReadError(t *testing.T) {
	t.Parallel()
	boom := errors.New("disk on fire")
	tr := &LineTransport{Reader: io.MultiReader(strings.NewReader("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"), iotest.ErrReader(boom)), Writer: io.Discard}
	conn, err := tr.Connect(testContext(t))
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Read(testContext(t))
	require.NoError(t, err)
	_, err = conn.Read(testContext(t))
	assert.ErrorIs(t, err, boom)
}

// TestLineTransportCloseStopsReading closes the input with the connection,
// which stops the reading goroutine.
func TestLineTransportCloseStopsReading(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	defer pw.Close()
	conn, err := (&LineTransport{Reader: pr, Writer: io.Discard}).Connect(testContext(t))
	require.NoError(t, err)
	require.NoError(t, conn.Close())
	_, err = conn.Read(testContext(t))
	assert.ErrorIs(t, err, io.EOF)
	_, err = pw.Write([]byte("{}\n"))
	assert.ErrorIs(t, err, io.ErrClosedPipe, "the input is closed")
}

// TestServeStdioTransportKeepsServing runs the test binary as an MCP server
// on its standard input and output (Serve with the SDK's StdioTransport, as
// a command would) and sends it every malformed line in one session.
func TestServeStdioTransportKeepsServing(t *testing.T) {
	t.Parallel()
	s := startSubprocessSession(t, "1")
	s.initialize()
	for i, tt := range badLines() {
		t.Run(tt.name, func(t *testing.T) {
			s.t = t
			s.echo(2*i, "before")
			s.send(tt.line)
			assertRPCError(t, s.recv(), tt.wantCode, tt.wantID)
			s.echo(2*i+1, "after")
		})
	}
	s.t = t
	require.NoError(t, s.end(), "the server exits with status 0 when its input closes")
}

// startSubprocessSession re-runs the test binary as a server (TestMain) in
// the given serverEnv mode, with a raw session on its standard input and
// output. The process is killed at the end of the test.
func startSubprocessSession(t *testing.T, mode string) *rawSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return startRawSession(t, func(in io.Reader, out io.Writer) error {
		cmd := execTestServer(ctx, mode)
		cmd.Stdin, cmd.Stdout = in, out
		return cmd.Run()
	})
}

func TestErrorAnswerEncoding(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id   json.RawMessage
		want string
	}{
		{nil, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"m \u003c\"\u003e"}}`},
		{json.RawMessage(`7`), `{"jsonrpc":"2.0","id":7,"error":{"code":-32700,"message":"m \u003c\"\u003e"}}`},
		{json.RawMessage(`"a"`), `{"jsonrpc":"2.0","id":"a","error":{"code":-32700,"message":"m \u003c\"\u003e"}}`},
	}
	for _, tt := range tests {
		got := errorAnswer(tt.id, -32700, `m <">`)
		assert.Equal(t, tt.want+"\n", string(got))
		assert.True(t, json.Valid(got))
	}
}
