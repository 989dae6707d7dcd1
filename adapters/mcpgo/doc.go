// Package mcpgo adapts llmtoolkit to mark3labs/mcp-go
// (github.com/mark3labs/mcp-go, built and tested with v1.2.1), in both
// directions. It is its own Go module, so llmtoolkit's core never requires
// mcp-go.
//
// # llmtoolkit's tools in an mcp-go server
//
// [ServerTools] turns every tool of a [llmtoolkit.Resolver] into an mcp-go
// [server.ServerTool], and [Register] adds them to an [server.MCPServer]:
//
//	ct, _ := codetools.New(root)
//	s := server.NewMCPServer("code", "1.0.0", server.WithToolCapabilities(true))
//	reg, err := mcpgo.Register(s, ct)
//
// Each tool keeps its name, description and JSON Schema (sent as
// RawInputSchema, the bytes of encoding/json's encoding of
// [llmtoolkit.Tool.Parameters], so the schema a client lists is
// byte-identical to the resolver's), its [llmtoolkit.Annotations] as MCP's
// four hints, its [llmtoolkit.Tool.SensitiveFields] and its
// [llmtoolkit.Tool.Deferred] in the tool's _meta under
// [ltmcp.MetaSensitiveFields] and [ltmcp.MetaDeferred], as llmtoolkit's own
// MCP server sends them (and the resolver reads them back). A tool whose parameters are not a schema of "type": "object" is an
// error, since MCP requires one.
//
// A call goes through [llmtoolkit.Execute]: the arguments are validated
// against the schema, a panic is rescued, and every wrapper of the resolver
// (permissions, audit, telemetry) sees it. A failure is a result marked
// isError whose text says what went wrong, never a Go error, so it reaches
// the model and never ends the client's run; arguments that are not a JSON
// object are such a failure too. A [llmtoolkit.Display] travels in the
// result's _meta under [ltmcp.DisplayMetaKey], as {"kind": ..., "payload":
// {...}}, exactly as llmtoolkit's MCP server sends it, never as
// structuredContent. What a tool reports with [llmtoolkit.ReportProgress]
// is sent as notifications/progress when the request carries a
// progressToken. Leave mcp-go's server.WithInputSchemaValidation off:
// Execute validates every call against the same schema, and with it on,
// mcp-go's validator answers an invalid call first, with its own message.
// mcp-go's server.WithStrictInputSchemaDefault does not touch these tools
// (it leaves raw schemas alone).
//
// MCP has no slot for llmtoolkit's session map or iteration: [WithSession]
// lets the host build the session map of each call from its context and
// request (the mcp-go client session, the request's _meta, HTTP headers);
// the iteration is not carried (an MCP client runs its own loop). A tool
// list that changes (the plan mode's switch) is re-read with
// [Registration.Refresh], which replaces the server's tools and makes mcp-go
// send notifications/tools/list_changed to the clients; one server shares
// one list between its clients (mcp-go's server.WithToolFilter can narrow
// it per request).
//
// # An mcp-go client's tools as a Resolver
//
// [NewResolver] turns an initialized mcp-go [client.MCPClient] (stdio,
// streamable HTTP, SSE or in-process) into a [llmtoolkit.Resolver], and
// [FromServer] does it for an in-process [server.MCPServer]. The tools are
// listed once (re-list them with [Resolver.Refresh], for instance when the
// client receives notifications/tools/list_changed), each schema converted
// to a map and validated by [llmtoolkit.NewToolFrom]; hints left out take
// MCP's defaults. A call is a tools/call; a result marked isError becomes an
// [*ltmcp.ToolError] (wrapping [ltmcp.ErrRemoteTool]) whose message is the
// server's text, so [llmtoolkit.Execute] hands it to the model unchanged;
// a Display in the result's _meta is shown with [llmtoolkit.Show], and
// structuredContent without one is shown as a Display of kind "mcp".
//
// Schemas come as mcp-go's client decodes them: type, properties,
// required, additionalProperties and $defs (draft-07 definitions rewritten
// as $defs); any other top-level keyword (a top-level description, oneOf,
// anyOf, allOf, $schema) is dropped by mcp-go before this package sees it,
// and a "required" that mcp-go encodes as [] for none is left out. Schemas
// made of those keywords, as llmtoolkit's own tools' are, come back byte
// for byte.
//
// What this direction cannot carry: progress notifications and other
// streams (the text arrives whole, at the end), cancellation beyond the
// call's context, elicitation and sampling requests, MCP tasks, output
// schemas, titles and icons, and resource links (each described in one
// bracketed line of the text). Images, audio and blob resources become
// parts ([llmtoolkit.Result.Parts]; audio has no name, a blob's name is its
// URI's last element); content whose base64 does not decode stays a line of
// the text. Text contents come back as the text, in order among
// themselves, not interleaved with the parts.
//
// Served, a result's parts follow its text as package mcp's server sends
// them: image, audio, embedded blob resource ("llmtoolkit:part/N/NAME"),
// resource link for a part by URL, text; at most 15 MiB of them (base64),
// a part past that left out whole and named in a last text content.
// llmtoolkit's session map and iteration are not sent to the server.
package mcpgo
