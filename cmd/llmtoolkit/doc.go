// Command llmtoolkit runs llmtoolkit's code tools from the command line and
// serves them to MCP clients.
//
// Usage:
//
//	llmtoolkit tools  [--root DIR] [--json]
//	llmtoolkit call   NAME [ARGS_JSON|-] [--root DIR]
//	llmtoolkit mcp    [--root DIR] [--read-only] [--trace-db FILE] [--tenant UUID] [--conversation UUID]
//	                  [--http ADDR [--issuer URL --resource URL --jwks-url URL --scopes S --write-scope S]
//	                   [--insecure-no-auth] [--allowed-origin O] [--rate N] [--tool-rate N]]
//	llmtoolkit traces [--db FILE] [--table NAME] [--tenant ID] [--conversation ID] [--call ID] [--limit N]
//
// tools lists the tools confined to DIR (default: the current directory)
// with the first line of their description, or with --json their
// definitions as an indented JSON array.
//
// call runs one tool and prints its result to stdout. ARGS_JSON is a JSON
// object; when omitted or "-" it is read from stdin unless stdin is a
// terminal. A failed tool prints its error message to stdout (what a model
// would see) and exits 1; invalid JSON arguments exit 1 with a message on
// stderr.
//
// mcp serves the tools over the Model Context Protocol on stdin/stdout,
// logging to stderr. --read-only offers only the tools annotated read-only;
// --trace-db records every call in a SQLite database, under --tenant (default
// the nil UUID) and --conversation (default a new UUID for each run).
// With --http ADDR it serves streamable HTTP instead: with --issuer every
// request needs a bearer JWT of that issuer for --resource, whose claims
// name the tenant and conversation of its calls (recorded as such); on an
// address other than loopback it refuses to start without --issuer unless
// --insecure-no-auth, and every start says how it is protected. Browser
// requests from other origins and DNS-rebinding requests are refused.
//
// traces prints the recent calls recorded in such a database (default
// llmtoolkit-traces.db), newest first, as an aligned table with each
// call's tenant and, for a call that ran model calls of its own (a
// sub-agent's), what they cost; --tenant keeps one tenant's calls.
//
// call and mcp export each tool call as an OpenTelemetry span (GenAI
// conventions, see package otelkit) with OTLP over HTTP when
// OTEL_EXPORTER_OTLP_ENDPOINT (or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set,
// configured by the standard OTEL_* variables; mcp continues the trace of
// a client that sends a traceparent in the request's _meta. Without the
// variable they export nothing and say nothing about it.
//
// Flags may come before or after positional arguments. Every command
// accepts -h/--help. A wrong command line prints a one-line error on stderr
// and exits 2.
package main
