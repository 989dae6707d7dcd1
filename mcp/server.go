package mcp

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns an MCP server that offers the tools of r.
//
// The tools are read from r.Tools() once, here, and registered with their
// schemas as given and their [llmtoolkit.Annotations] as MCP's hints
// (readOnlyHint, destructiveHint, idempotentHint and openWorldHint, all four
// sent, false values included). Tool metadata is not sent. A tool listed
// twice is registered once, the first definition winning (as in
// [llmtoolkit.Compose]); a tool whose parameters are not a schema of
// "type": "object" is skipped with a warning, since MCP requires one.
//
// Every tools/call goes through [llmtoolkit.Execute] with the call's
// context (cancelled when the client cancels): the arguments are validated
// against the tool's schema, a panic is rescued, and any failure answers
// with a result marked isError whose text says what went wrong, never a
// protocol error. A [llmtoolkit.Display] the tool shows is sent as
// structuredContent: {"kind": ..., "payload": {...}}.
//
// The server's name and version are set with [WithName] and [WithVersion].
// Run it with [sdk.Server.Run] on any transport, or use [Serve] and
// [Handler]. Prompts and resources may be added to it with the SDK.
func NewServer(r llmtoolkit.Resolver, opts ...Option) *sdk.Server {
	cfg := newConfig(opts)
	srv := sdk.NewServer(&sdk.Implementation{Name: cfg.name, Version: cfg.version}, &sdk.ServerOptions{
		Instructions: cfg.instructions,
		Logger:       cfg.logger,
		// Advertise tools even when r has none, so clients know to ask.
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{ListChanged: true}},
	})
	extractTraceContext(srv, cfg.propagator)
	if r == nil {
		return srv
	}
	tools := r.Tools()
	r = withIndex(r, tools)
	seen := make(map[string]bool)
	for _, t := range tools {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		st, ok := sdkTool(t)
		if !ok {
			cfg.warnLogger().Warn("mcp: tool skipped: its parameters must be a JSON Schema of \"type\": \"object\"",
				slog.String("tool", t.Name))
			continue
		}
		srv.AddTool(st, toolHandler(r, t.Name, cfg.warnLogger()))
	}
	return srv
}

// Serve runs an MCP server for r (see [NewServer]) on transport until the
// client ends the session or ctx is cancelled, in which case it returns
// ctx's error. For a command serving its standard input and output, pass
// &sdk.StdioTransport{}.
func Serve(ctx context.Context, r llmtoolkit.Resolver, transport sdk.Transport, opts ...Option) error {
	return NewServer(r, opts...).Run(ctx, transport)
}

// Handler returns an http.Handler that serves the tools of r over MCP's
// streamable HTTP transport, one MCP session per client, all sharing one
// server (see [NewServer]).
func Handler(r llmtoolkit.Resolver, opts ...Option) http.Handler {
	cfg := newConfig(opts)
	srv := NewServer(r, opts...)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Logger: cfg.logger})
}

// toolHandler answers tools/call for one tool through llmtoolkit.Execute.
func toolHandler(r llmtoolkit.Resolver, name string, log *slog.Logger) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (*sdk.CallToolResult, error) {
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		call, err := llmtoolkit.ParseCall("", name, string(raw))
		if err != nil {
			return textResult(err.Error(), true), nil
		}
		res := llmtoolkit.Execute(ctx, r, call)
		out := textResult(res.Content, res.IsError)
		if res.Display != nil {
			data, err := json.Marshal(res.Display)
			if err != nil {
				log.WarnContext(ctx, "mcp: display not sent: it cannot be encoded as JSON",
					slog.String("tool", name), slog.String("kind", res.Display.Kind), slog.Any("error", err))
			} else {
				out.StructuredContent = json.RawMessage(data)
			}
		}
		return out, nil
	}
}

func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}
