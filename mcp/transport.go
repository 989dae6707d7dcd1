package mcp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// terminateAfter is how long Close waits for a server process to exit
// after closing its input, then after SIGTERM, before killing it.
const terminateAfter = 5 * time.Second

// CommandTransport returns a transport that starts cmd when [Connect]
// connects and speaks MCP over its standard input and output. Leave
// cmd.Stdin and cmd.Stdout unset; set cmd.Stderr to see the server's logs.
// [Client.Close] closes the server's input and waits a few seconds for it
// to exit before terminating it.
//
// The server's output is read one line at a time (see [LineTransport]):
// a line that is not a JSON-RPC message does not end the session (the
// SDK's own stdio transports end it). A malformed answer with a readable
// id fails the request it answers with a JSON-RPC error; a malformed
// request is answered with one; any other bad line is dropped. Each is
// logged as a warning ([WithLogger]). A request whose answer was dropped
// waits for its context to end.
func CommandTransport(cmd *exec.Cmd) sdk.Transport {
	return &commandTransport{cmd: cmd}
}

// commandTransport runs a server process and reads its output as a
// client's LineTransport.
type commandTransport struct {
	cmd   *exec.Cmd
	log   *slog.Logger // set by Connect
	bound *answerBound // set by Connect
	ext   *lineCaller  // set by Connect
}

// Connect starts the command; it implements [sdk.Transport].
func (t *commandTransport) Connect(ctx context.Context) (sdk.Connection, error) {
	stdout, err := t.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	stdin, err := t.cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := t.cmd.Start(); err != nil {
		return nil, err
	}
	lt := &LineTransport{Reader: io.NopCloser(stdout), Writer: stdin, Logger: t.log,
		closeWriter: true, client: true, bound: t.bound, ext: t.ext, onClose: func() error { return awaitExit(t.cmd) }}
	if t.bound != nil {
		lt.MaxLineLength = lineBound(0, t.bound)
	}
	return lt.Connect(ctx)
}

// awaitExit waits for a server process whose input was closed to exit,
// then terminates it, then kills it (as the MCP specification asks).
func awaitExit(cmd *exec.Cmd) error {
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	wait := func() (error, bool) {
		select {
		case err := <-exited:
			return err, true
		case <-time.After(terminateAfter):
			return nil, false
		}
	}
	if err, ok := wait(); ok {
		return err
	}
	if cmd.Process.Signal(syscall.SIGTERM) == nil {
		if err, ok := wait(); ok {
			return err
		}
	}
	if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	if err, ok := wait(); ok {
		return err
	}
	return fmt.Errorf("mcp: the MCP server process %d does not exit", cmd.Process.Pid)
}

// clientTransportFor returns the transport a client connects through:
// the SDK's CommandTransport and IOTransport become a client's
// LineTransport on the same streams, so that a bad line does not end the
// session, and a LineTransport reads as a client's; each reads lines of
// at most the client's bound. Others are used as they are.
func clientTransportFor(transport sdk.Transport, log *slog.Logger, b *answerBound, ext *lineCaller) sdk.Transport {
	switch t := transport.(type) {
	case *commandTransport:
		c := *t
		c.log, c.bound, c.ext = log, b, ext
		return &c
	case *sdk.CommandTransport:
		return &commandTransport{cmd: t.Command, log: log, bound: b, ext: ext}
	case *sdk.IOTransport:
		return &LineTransport{Reader: t.Reader, Writer: t.Writer, Logger: log, closeWriter: true, client: true,
			bound: b, MaxLineLength: lineBound(0, b), ext: ext}
	case *LineTransport:
		c := *t
		c.client, c.bound, c.MaxLineLength, c.ext = true, b, lineBound(t.MaxLineLength, b), ext
		if c.Logger == nil {
			c.Logger = log
		}
		return &c
	}
	return transport
}

// HTTPTransport returns a transport to an MCP server at endpoint over the
// streamable HTTP transport. httpClient may be nil for
// [http.DefaultClient]; pass one to add authentication headers, TLS
// settings or timeouts.
func HTTPTransport(endpoint string, httpClient *http.Client) sdk.Transport {
	return &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient}
}
