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
// Parts ([llmtoolkit.Result.Parts]: images, documents) cross MCP both
// ways. The server sends each after the text, in order: an image as image
// content, an audio file as audio content, any other file (a PDF) as an
// embedded resource with its bytes (blob; its URI "llmtoolkit:part/N/NAME"
// keeps the name), a part by URL as a resource link, a text part as text
// content; they get what the text and the Display left of 15 MiB, and a
// part that does not fit is left out whole, named in a last text content
// and logged. The Client keeps image, audio and blob content as parts (an
// audio part has no name; a resource's name is its URI's last element);
// text content, text resources and resource links stay in the text, in
// order among themselves.
//
// The SDK's package is also named mcp; this package imports it as sdk, and
// its transports ([sdk.Transport]) are accepted as they are.
//
// # Bad peers
//
// The server survives bad peers: over stdio, LineTransport answers a
// malformed line with the JSON-RPC error (-32700, -32600) and goes on; a
// tool's answer is capped (text 8 MiB after encoding, Display 4 MiB, cut on
// its decoded JSON with its keys kept) so it always fits the 16 MiB frame;
// handler panics become error results (TestServeAnswersMalformedLines,
// TestServerCapsLargeResults; through llmtoolkit mcp,
// TestMCPAnswersMalformedLines). The server sends no answer to a request the
// client cancelled (MCP's rule; the SDK sent code 0), and an error of code 0
// as -32603 (TestCancelledRequestIsNotAnswered). The transport's reader logs
// a panic and ends the session instead of the process.
//
// A server cannot flood a client: a listing reads at most [WithMaxToolPages]
// (100) pages and [WithMaxTools] (1,000) tools, and a cursor sent twice ends
// it ([ErrListLimit], TestRefreshBounded against a hand-written JSON-RPC
// server). Over stdio ([CommandTransport]) the client reads through a client
// LineTransport: a bad line is dropped and logged, a malformed answer fails
// only its call (TestClientSurvivesBadFrames). [Connect] skips, with a
// warning naming it, a remote tool whose schema expands past
// [WithMaxSchemaNodes] subschemas once its references are followed
// (llmtoolkit.Tool.SchemaNodes, default 20,000;
// TestConnectRefusesComplexSchemas).
//
// The client reads a remote tool's sensitive fields from its _meta
// ([MetaSensitiveFields], sent by the server), and older servers'
// structuredContent as the Display. [WithPropagator] carries the caller's
// trace context in each request's _meta (the server extracts it), so hosts
// trace over MCP without this package importing OpenTelemetry.
package mcp
