package mcp

import (
	"net/http"
	"os/exec"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// CommandTransport returns a transport that starts cmd when [Connect]
// connects and speaks MCP over its standard input and output. Leave
// cmd.Stdin and cmd.Stdout unset; set cmd.Stderr to see the server's logs.
// [Client.Close] closes the server's input and waits a few seconds for it
// to exit before terminating it.
func CommandTransport(cmd *exec.Cmd) sdk.Transport {
	return &sdk.CommandTransport{Command: cmd}
}

// HTTPTransport returns a transport to an MCP server at endpoint over the
// streamable HTTP transport. httpClient may be nil for
// [http.DefaultClient]; pass one to add authentication headers, TLS
// settings or timeouts.
func HTTPTransport(endpoint string, httpClient *http.Client) sdk.Transport {
	return &sdk.StreamableClientTransport{Endpoint: endpoint, HTTPClient: httpClient}
}
