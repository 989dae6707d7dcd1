package mcp

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// badFrameServer is a hand-written MCP server over pipes whose answers to
// tools/call are, in turn: a line that is not JSON then the answer; an
// answer that is not valid JSON-RPC ("jsonrpc": "1.0"); the answer.
func badFrameServer(t *testing.T) sdk.Transport {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	t.Cleanup(func() { _ = inR.Close(); _ = outW.Close() })
	go func() {
		defer outW.Close()
		sc := bufio.NewScanner(inR)
		calls := 0
		for sc.Scan() {
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
			}
			if json.Unmarshal(sc.Bytes(), &req) != nil || len(req.ID) == 0 {
				continue
			}
			answer := func(result string) string {
				return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"result":%s}`+"\n", req.ID, result)
			}
			var out string
			switch req.Method {
			case "initialize":
				out = answer(`{"protocolVersion":"2025-06-18","serverInfo":{"name":"bad-frames","version":"0"},"capabilities":{"tools":{}}}`)
			case "tools/list":
				out = answer(`{"tools":[{"name":"echo","description":"Echoes.","inputSchema":{"type":"object"}}]}`)
			case "tools/call":
				calls++
				ok := answer(fmt.Sprintf(`{"content":[{"type":"text","text":"answer %d"}]}`, calls))
				switch calls {
				case 1:
					out = "this is not JSON\n" + ok
				case 2:
					out = fmt.Sprintf(`{"jsonrpc":"1.0","id":%s,"result":{}}`+"\n", req.ID)
				default:
					out = ok
				}
			default:
				out = answer(`{}`)
			}
			if _, err := io.WriteString(outW, out); err != nil {
				return
			}
		}
	}()
	return &sdk.IOTransport{Reader: outR, Writer: inW}
}

// TestClientSurvivesBadFrames: one line from the server that the SDK's
// stream transports could not decode ended the mcp.Client session, and
// every later call failed. Now a bad line is dropped (logged), a
// malformed answer fails only the call it answers, and the session goes
// on.
func TestClientSurvivesBadFrames(t *testing.T) {
	t.Parallel()
	c, err := Connect(testContext(t), badFrameServer(t))
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })

	out, err := c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo"})
	require.NoError(t, err, "a line that is not JSON is dropped")
	assert.Equal(t, "answer 1", out)

	_, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo"})
	require.Error(t, err, "a malformed answer fails its call")
	assert.Contains(t, err.Error(), "the MCP server sent a malformed answer")

	out, err = c.Resolve(testContext(t), llmtoolkit.Call{Name: "echo"})
	require.NoError(t, err, "the session goes on")
	assert.Equal(t, "answer 3", out)
}
