package mcp

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestCancelledRequestIsNotAnswered: a tools/call the client cancelled
// (notifications/cancelled) was answered over stdio with a JSON-RPC error
// of code 0, which no JSON-RPC or MCP rule defines. MCP's cancellation
// rule is that the receiver SHOULD NOT send a response for a cancelled
// request, and the sender ignores one that comes anyway: the server now
// sends none, and goes on serving.
func TestCancelledRequestIsNotAnswered(t *testing.T) {
	started := make(chan struct{}, 1)
	f := fixture(t)
	f.Add(llmtoolkit.MustTool("slow", "Waits until cancelled.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		started <- struct{}{}
		<-ctx.Done()
		return "", ctx.Err()
	})
	for _, when := range []string{"while running", "before it starts"} {
		t.Run(when, func(t *testing.T) {
			s := startRawSession(t, func(in io.Reader, out io.Writer) error {
				return Serve(testContext(t), f, &sdk.IOTransport{Reader: io.NopCloser(in), Writer: nopWriteCloser{out}})
			})
			s.initialize()
			if when == "while running" {
				s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow","arguments":{}}}`)
				select {
				case <-started:
				case <-time.After(testTimeout):
					t.Fatal("the slow tool did not start")
				}
				s.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5,"reason":"user"}}`)
			} else {
				// Both on one write: the cancel is read before the call runs,
				// or just after it started; the tool ends only when cancelled,
				// so any answer to "five" is the wrong one.
				s.write(`{"jsonrpc":"2.0","id":"five","method":"tools/call","params":{"name":"slow","arguments":{}}}` + "\n" +
					`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"five"}}` + "\n")
			}
			time.Sleep(100 * time.Millisecond) // let a wrong answer come first
			s.echo(6, "next")
			require.NoError(t, s.end())
		})
	}
}
