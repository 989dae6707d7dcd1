package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	ltmcp "github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ErrNotObjectSchema is wrapped by the error of [ServerTools] and
// [Register] for a tool whose parameters are not a JSON Schema of
// "type": "object", which MCP requires of every tool.
var ErrNotObjectSchema = errors.New(`mcpgo: a tool's parameters must be a JSON Schema of "type": "object"`)

// Option configures [ServerTools], [Register], [NewResolver] and
// [FromServer]; each says which it applies to.
type Option func(*config)

type config struct {
	session        func(ctx context.Context, req mcp.CallToolRequest) map[string]any
	logger         *slog.Logger
	maxTools       int // see WithMaxTools
	maxPages       int // see WithMaxTools
	maxSchemaNodes int // see WithMaxSchemaNodes
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o != nil {
			o(&c)
		}
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	if c.maxTools <= 0 {
		c.maxTools = ltmcp.DefaultMaxTools
	}
	if c.maxPages <= 0 {
		c.maxPages = ltmcp.DefaultMaxToolPages
	}
	if c.maxSchemaNodes <= 0 {
		c.maxSchemaNodes = ltmcp.DefaultMaxSchemaNodes
	}
	return c
}

// WithMaxTools bounds the tools a [Resolver] accepts in one listing, every
// tool sent counted (default [ltmcp.DefaultMaxTools]), and the pages it
// reads ([ltmcp.DefaultMaxToolPages]); past either the listing fails with an
// error wrapping [ltmcp.ErrListLimit]. Zero or less means the default. It
// has no effect on [ServerTools].
func WithMaxTools(n int) Option { return func(c *config) { c.maxTools = n } }

// WithMaxSchemaNodes bounds the size of a listed tool's schema, with every
// reference expanded ([llmtoolkit.Tool.SchemaNodes], default
// [ltmcp.DefaultMaxSchemaNodes]); a [Resolver]'s listing with a tool above
// it fails with an error wrapping [llmtoolkit.ErrSchemaTooComplex]. Zero or
// less means the default. It has no effect on [ServerTools].
func WithMaxSchemaNodes(n int) Option { return func(c *config) { c.maxSchemaNodes = n } }

// WithSession makes every call run with the session map fn returns
// ([llmtoolkit.Scope].Session), read by audit (trace) and the agent layer; fn
// sees the call's context (where [server.ClientSessionFromContext] gives
// the mcp-go client session) and its request (its _meta, its HTTP
// headers). A nil map leaves the context as it is. fn must not block.
func WithSession(fn func(ctx context.Context, req mcp.CallToolRequest) map[string]any) Option {
	return func(c *config) { c.session = fn }
}

// WithLogger sets the logger of the warnings and errors the handlers log
// (a Display that cannot be encoded, a panic outside the tool);
// slog.Default() when unset.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// ServerTools returns every tool of r as an mcp-go server tool, in r's
// order, a tool listed twice kept once (the first definition wins, as in
// [llmtoolkit.Compose]). Each handler runs the call through
// [llmtoolkit.Execute] on r; see the package documentation. It fails, naming
// the tool, when a tool's parameters are not an object schema or cannot be
// encoded as JSON.
func ServerTools(r llmtoolkit.Resolver, opts ...Option) ([]server.ServerTool, error) {
	if r == nil {
		return nil, errors.New("mcpgo: ServerTools needs a resolver, got nil")
	}
	cfg := newConfig(opts)
	tools := r.Tools()
	r = llmtoolkit.Indexed(r, tools)
	out := make([]server.ServerTool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if seen[t.Name] {
			continue
		}
		seen[t.Name] = true
		mt, err := mcpTool(t)
		if err != nil {
			return nil, err
		}
		out = append(out, server.ServerTool{Tool: mt, Handler: toolHandler(r, t.Name, cfg)})
	}
	return out, nil
}

// mcpTool converts a tool to its mcp-go definition, its schema as raw JSON.
func mcpTool(t llmtoolkit.Tool) (mcp.Tool, error) {
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if params["type"] != "object" {
		return mcp.Tool{}, fmt.Errorf("%w: tool %q has \"type\": %v; give it an object schema", ErrNotObjectSchema, t.Name, params["type"])
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return mcp.Tool{}, fmt.Errorf("mcpgo: the schema of tool %q cannot be encoded as JSON: %w", t.Name, err)
	}
	mt := mcp.Tool{Name: t.Name, Description: t.Description, RawInputSchema: raw}
	if a := t.Annotations; a != nil {
		mt.Annotations = mcp.ToolAnnotation{
			ReadOnlyHint:    new(a.ReadOnly),
			DestructiveHint: new(a.Destructive),
			IdempotentHint:  new(a.Idempotent),
			OpenWorldHint:   new(a.OpenWorld),
		}
	}
	meta := map[string]any{}
	if len(t.SensitiveFields) > 0 {
		meta[ltmcp.MetaSensitiveFields] = slices.Clone(t.SensitiveFields)
	}
	if t.Deferred {
		meta[ltmcp.MetaDeferred] = true
	}
	if len(meta) > 0 {
		mt.Meta = mcp.NewMetaFromMap(meta)
	}
	return mt, nil
}

// toolHandler answers tools/call for one tool through llmtoolkit.Execute.
// mcp-go's server recovers no panic of a handler: one outside the tool
// (Execute rescues the tool's own), say in the session function, becomes an
// error result.
func toolHandler(r llmtoolkit.Resolver, name string, cfg config) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (out *mcp.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				cfg.logger.ErrorContext(ctx, "mcpgo: answering a tool call panicked",
					slog.String("tool", name), slog.String("panic_type", fmt.Sprintf("%T", p)), slog.String("stack", string(debug.Stack())))
				out, err = mcp.NewToolResultError(fmt.Sprintf("internal error while answering tool %q: %v", name, p)), nil
			}
		}()
		call := callOf(name, req.Params.Arguments)
		if cfg.session != nil {
			if s := cfg.session(ctx, req); s != nil {
				ctx = llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = s })
			}
		}
		if token := progressToken(req); token != nil {
			ctx = withProgress(ctx, token, name, cfg.logger)
		}
		res := llmtoolkit.Execute(ctx, r, call)
		out = &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(res.Content)}, IsError: res.IsError}
		if len(res.Parts) > 0 {
			contents, notes := partContents(res.Parts)
			out.Content = append(out.Content, contents...)
			if len(notes) > 0 {
				out.Content = append(out.Content, mcp.NewTextContent(strings.Join(notes, "\n")))
				cfg.logger.WarnContext(ctx, "mcpgo: parts of a tool answer left out", slog.String("tool", name), slog.Int("left out", len(notes)))
			}
		}
		if res.Display != nil {
			data, err := displayJSON(*res.Display)
			if err != nil {
				cfg.logger.WarnContext(ctx, "mcpgo: display not sent: it cannot be encoded as JSON",
					slog.String("tool", name), slog.String("kind", res.Display.Kind), slog.Any("error", err))
			} else {
				out.Meta = mcp.NewMetaFromMap(map[string]any{ltmcp.DisplayMetaKey: data})
			}
		}
		return out, nil
	}
}

// callOf builds the call of a request's arguments: a JSON object as it is,
// none as {}, anything else a malformed call that Execute answers with an
// error the model can act on.
func callOf(name string, args any) llmtoolkit.Call {
	switch a := args.(type) {
	case map[string]any:
		return llmtoolkit.Call{Name: name, Arguments: a}
	case nil:
		return llmtoolkit.Call{Name: name, Arguments: map[string]any{}}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return llmtoolkit.MalformedCall("", name, fmt.Sprint(args), err)
	}
	call, err := llmtoolkit.ParseCall("", name, string(raw))
	if err != nil {
		return llmtoolkit.MalformedCall("", name, string(raw), err)
	}
	return call
}

// displayJSON encodes a Display as llmtoolkit's MCP server sends it; a
// panic of a payload's MarshalJSON is an error.
func displayJSON(d llmtoolkit.Display) (data json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			data, err = nil, fmt.Errorf("encoding the display panicked: %v", p)
		}
	}()
	return json.Marshal(d)
}

func progressToken(req mcp.CallToolRequest) mcp.ProgressToken {
	if req.Params.Meta == nil {
		return nil
	}
	return req.Params.Meta.ProgressToken
}

// withProgress sends what the tool reports with llmtoolkit.ReportProgress
// as notifications/progress to the client that asked for it.
func withProgress(ctx context.Context, token mcp.ProgressToken, name string, log *slog.Logger) context.Context {
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return ctx
	}
	return llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{Progress: func(p llmtoolkit.Progress) {
		params := map[string]any{"progressToken": token, "progress": p.Progress}
		if p.Total > 0 {
			params["total"] = p.Total
		}
		if p.Message != "" {
			params["message"] = p.Message
		}
		if err := srv.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
			log.WarnContext(ctx, "mcpgo: progress not sent", slog.String("tool", name), slog.Any("error", err))
		}
	}})
}

// Registration is the set of a resolver's tools added to an mcp-go server
// by [Register].
type Registration struct {
	srv  *server.MCPServer
	r    llmtoolkit.Resolver
	opts []Option

	mu    sync.Mutex
	names []string
}

// Register adds every tool of r to s (see [ServerTools]) and returns the
// registration, whose Refresh re-reads r's tools. Create s with
// server.WithToolCapabilities(true) so that clients are told when the list
// changes.
func Register(s *server.MCPServer, r llmtoolkit.Resolver, opts ...Option) (*Registration, error) {
	if s == nil {
		return nil, errors.New("mcpgo: Register needs an *server.MCPServer, got nil")
	}
	reg := &Registration{srv: s, r: r, opts: opts}
	if err := reg.Refresh(); err != nil {
		return nil, err
	}
	return reg, nil
}

// Refresh re-reads the resolver's tools (after the plan mode's switch, say):
// tools no longer listed are deleted from the server, the others added or
// replaced, and mcp-go tells the clients that the list changed. Tools of the
// server that were not registered here are left alone. On error the
// server's tools are unchanged.
func (g *Registration) Refresh() error {
	tools, err := ServerTools(g.r, g.opts...)
	if err != nil {
		return err
	}
	names := make([]string, len(tools))
	for i, t := range tools {
		names[i] = t.Tool.Name
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	var gone []string
	for _, n := range g.names {
		if !slices.Contains(names, n) {
			gone = append(gone, n)
		}
	}
	if len(gone) > 0 {
		g.srv.DeleteTools(gone...)
	}
	g.srv.AddTools(tools...)
	g.names = names
	return nil
}

// Names returns the names of the tools registered, in the resolver's order.
func (g *Registration) Names() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return slices.Clone(g.names)
}
