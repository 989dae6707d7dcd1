// Package mcp connects llmtoolkit to the Model Context Protocol, with the
// official Go SDK (github.com/modelcontextprotocol/go-sdk).
//
// Both directions are covered:
//
//   - [NewServer], [Serve] and [Handler] expose any [llmtoolkit.Resolver] to
//     MCP clients (Claude Desktop, editors, inspectors). tools/list comes
//     from the resolver's Tools, with schemas as given and annotations as
//     MCP's hints; tools/call goes through [llmtoolkit.Execute], so a
//     failing, panicking or mis-called tool answers with a result marked
//     isError (never a protocol error); the text content is the model's
//     answer, and a [llmtoolkit.Display] goes out in the result's _meta
//     under [DisplayMetaKey], never as structuredContent.
//   - [Connect] turns any MCP server into a [llmtoolkit.Resolver]: a [Client]
//     lists the server's tools once and calls them with tools/call; results
//     marked isError become a [*ToolError]. A Client composes with local
//     tools through [llmtoolkit.Compose].
//
// Progress goes both ways: what a served tool reports with
// [llmtoolkit.ReportProgress] goes to a client that asked for it as
// notifications/progress, and a Client asks a server for progress when
// its caller's context has a progress function (agentloop sets one) and
// passes each notification on to it while the call runs.
//
// [CommandTransport] runs an MCP server as a subprocess over stdio, and
// [HTTPTransport] reaches one over streamable HTTP. A server on stdio uses
// [StdioTransport] (a [LineTransport]), which answers a malformed line with
// a JSON-RPC error and goes on serving, where the SDK's transport would end
// the session; [Serve] uses it for the SDK's stdio and io transports too.
// Every answer fits in one message a Go SDK client accepts (16 MiB): a tool
// result's text and Display are cut to fit, with a marker.
//
// The SDK's package is also named mcp; this package imports it as sdk, and
// its transports ([sdk.Transport]) are accepted as they are.
package mcp
