package mcpgo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	ltmcp "github.com/llmtoolkit/llmtoolkit/mcp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Resolver is a [llmtoolkit.Resolver] over the tools of an MCP server that
// an mcp-go client reaches. It is safe for concurrent use.
type Resolver struct {
	c     client.MCPClient
	cfg   config
	owned bool // Close closes c

	mu     sync.RWMutex
	tools  []llmtoolkit.Tool
	byName map[string]int
}

// NewResolver lists the tools of the server c is connected to (c must be
// started and initialized) and returns the resolver that calls them. A
// tool whose schema is not a JSON object schema, or whose definition
// [llmtoolkit.NewToolFrom] refuses, fails it, naming the tool. The caller
// keeps c and closes it. The listing is bounded ([WithMaxTools],
// [WithMaxSchemaNodes]), since the server may be anyone's.
func NewResolver(ctx context.Context, c client.MCPClient, opts ...Option) (*Resolver, error) {
	if c == nil {
		return nil, errors.New("mcpgo: NewResolver needs an mcp-go client, got nil")
	}
	r := &Resolver{c: c, cfg: newConfig(opts)}
	if err := r.Refresh(ctx); err != nil {
		return nil, err
	}
	return r, nil
}

// FromServer connects an in-process mcp-go client to s, initializes it and
// returns the resolver over s's tools ([NewResolver]); Close closes the
// client.
func FromServer(ctx context.Context, s *server.MCPServer, opts ...Option) (*Resolver, error) {
	if s == nil {
		return nil, errors.New("mcpgo: FromServer needs an *server.MCPServer, got nil")
	}
	c, err := client.NewInProcessClient(s)
	if err != nil {
		return nil, fmt.Errorf("mcpgo: in-process client: %w", err)
	}
	if err := c.Start(ctx); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mcpgo: starting the in-process client: %w", err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "llmtoolkit-mcpgo", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		_ = c.Close()
		return nil, fmt.Errorf("mcpgo: initializing the in-process client: %w", err)
	}
	r, err := NewResolver(ctx, c, opts...)
	if err != nil {
		_ = c.Close()
		return nil, err
	}
	r.owned = true
	return r, nil
}

// Close closes the client when the resolver made it ([FromServer]), and
// does nothing otherwise.
func (r *Resolver) Close() error {
	if !r.owned {
		return nil
	}
	return r.c.Close()
}

// Refresh lists the server's tools again (call it when the client receives
// notifications/tools/list_changed). On error the tools are unchanged.
func (r *Resolver) Refresh(ctx context.Context) error {
	listed, err := r.list(ctx)
	if err != nil {
		return err
	}
	tools := make([]llmtoolkit.Tool, 0, len(listed))
	byName := make(map[string]int, len(listed))
	for _, mt := range listed {
		if _, dup := byName[mt.Name]; dup {
			continue
		}
		t, err := fromMCPTool(mt)
		if err != nil {
			return err
		}
		if err := t.CheckSchemaNodes(r.cfg.maxSchemaNodes); err != nil {
			return fmt.Errorf("mcpgo: tool %q of the MCP server refused: %w", t.Name, err)
		}
		byName[t.Name] = len(tools)
		tools = append(tools, t)
	}
	r.mu.Lock()
	r.tools, r.byName = tools, byName
	r.mu.Unlock()
	return nil
}

// list reads the server's tools page by page, within the bounds.
func (r *Resolver) list(ctx context.Context) ([]mcp.Tool, error) {
	var all []mcp.Tool
	req := mcp.ListToolsRequest{}
	for page := 1; ; page++ {
		if page > r.cfg.maxPages {
			return nil, fmt.Errorf("%w: more than %d pages of tools (WithMaxTools raises the bound)", ltmcp.ErrListLimit, r.cfg.maxPages)
		}
		res, err := r.c.ListToolsByPage(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("mcpgo: listing the MCP server's tools: %w", err)
		}
		all = append(all, res.Tools...)
		if len(all) > r.cfg.maxTools {
			return nil, fmt.Errorf("%w: more than %d tools (WithMaxTools raises the bound)", ltmcp.ErrListLimit, r.cfg.maxTools)
		}
		if res.NextCursor == "" {
			return all, nil
		}
		if res.NextCursor == req.Params.Cursor {
			return nil, fmt.Errorf("mcpgo: listing the MCP server's tools: the server sent the same cursor twice (%q)", res.NextCursor)
		}
		req.Params.Cursor = res.NextCursor
	}
}

// Tools returns the server's tools as last listed. The slice is shared: do
// not modify it.
func (r *Resolver) Tools() []llmtoolkit.Tool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.tools
}

// LookupTool finds one tool by name ([llmtoolkit.ToolLookup]).
func (r *Resolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	i, ok := r.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return r.tools[i], true
}

// Resolve calls the tool on the server. A name the server did not list is
// an error wrapping [llmtoolkit.ErrUnknownTool]; a result marked isError is
// an [*ltmcp.ToolError] with the server's text; a protocol or transport
// failure is wrapped with the tool's name. A Display in the result is shown
// with [llmtoolkit.Show].
func (r *Resolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if _, ok := r.LookupTool(call.Name); !ok {
		return "", fmt.Errorf("%w: %q is not a tool of this MCP server", llmtoolkit.ErrUnknownTool, call.Name)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = call.Name
	req.Params.Arguments = call.Arguments
	res, err := r.c.CallTool(ctx, req)
	if err != nil {
		return "", fmt.Errorf("mcpgo: calling tool %q: %w", call.Name, err)
	}
	if res == nil {
		return "", fmt.Errorf("mcpgo: calling tool %q: the server sent no result", call.Name)
	}
	if d, ok := resultDisplay(res); ok {
		llmtoolkit.Show(ctx, d)
	}
	text := contentText(res.Content)
	llmtoolkit.Attach(ctx, contentParts(res.Content)...)
	if res.IsError {
		return "", &ltmcp.ToolError{Tool: call.Name, Message: text}
	}
	return text, nil
}

// fromMCPTool converts an mcp-go tool to a validated llmtoolkit.Tool. A
// missing description is replaced by the title or a generic one, since
// models need one; hints left out take MCP's defaults (destructive unless
// read-only, open world).
func fromMCPTool(mt mcp.Tool) (llmtoolkit.Tool, error) {
	raw := []byte(mt.RawInputSchema)
	if len(raw) == 0 {
		var err error
		if raw, err = json.Marshal(mt.InputSchema); err != nil {
			return llmtoolkit.Tool{}, fmt.Errorf("mcpgo: the schema of tool %q cannot be encoded: %w", mt.Name, err)
		}
	}
	var params map[string]any
	if err := json.Unmarshal(raw, &params); err != nil {
		return llmtoolkit.Tool{}, fmt.Errorf("%w %q: its inputSchema must be a JSON object: %w", llmtoolkit.ErrInvalidTool, mt.Name, err)
	}
	if len(mt.RawInputSchema) == 0 && len(mt.InputSchema.Required) == 0 {
		// mcp-go encodes a missing "required" as []: the same schema,
		// written back as the server most likely sent it.
		delete(params, "required")
	}
	t := llmtoolkit.Tool{Name: mt.Name, Description: mt.Description, Parameters: params}
	for _, alt := range []string{mt.Title, mt.Annotations.Title, "Tool " + mt.Name + " of an MCP server."} {
		if strings.TrimSpace(t.Description) != "" {
			break
		}
		t.Description = alt
	}
	a := mt.Annotations
	if a.ReadOnlyHint != nil || a.DestructiveHint != nil || a.IdempotentHint != nil || a.OpenWorldHint != nil {
		ro := boolOr(a.ReadOnlyHint, false)
		t.Annotations = &llmtoolkit.Annotations{
			ReadOnly:    ro,
			Destructive: boolOr(a.DestructiveHint, !ro),
			Idempotent:  boolOr(a.IdempotentHint, false),
			OpenWorld:   boolOr(a.OpenWorldHint, true),
		}
	}
	if mt.Meta != nil {
		t.SensitiveFields = sensitiveFields(mt.Meta.AdditionalFields[ltmcp.MetaSensitiveFields])
		t.Deferred = mt.Meta.AdditionalFields[ltmcp.MetaDeferred] == true
	}
	return llmtoolkit.NewToolFrom(t)
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// sensitiveFields reads a list of field names (decoded from JSON, or
// in-process).
func sensitiveFields(v any) []string {
	switch l := v.(type) {
	case []string:
		return append([]string(nil), l...)
	case []any:
		var names []string
		for _, x := range l {
			if s, ok := x.(string); ok && strings.TrimSpace(s) != "" {
				names = append(names, s)
			}
		}
		return names
	}
	return nil
}

// resultDisplay is the Display of a result: the one in _meta under
// ltmcp.DisplayMetaKey, else its structured content under kind "mcp".
func resultDisplay(res *mcp.CallToolResult) (llmtoolkit.Display, bool) {
	if res.Meta != nil {
		if d, ok := displayOf(res.Meta.AdditionalFields[ltmcp.DisplayMetaKey]); ok {
			return d, true
		}
	}
	if res.StructuredContent != nil {
		return llmtoolkit.Display{Kind: "mcp", Payload: map[string]any{"structuredContent": res.StructuredContent}}, true
	}
	return llmtoolkit.Display{}, false
}

// displayOf reads {"kind": ..., "payload": ...} decoded from JSON, or the
// raw JSON a handler called in-process put there.
func displayOf(v any) (llmtoolkit.Display, bool) {
	var m map[string]any
	switch x := v.(type) {
	case map[string]any:
		m = maps.Clone(x)
	case json.RawMessage:
		if json.Unmarshal(x, &m) != nil {
			return llmtoolkit.Display{}, false
		}
	default:
		return llmtoolkit.Display{}, false
	}
	kind, _ := m["kind"].(string)
	if kind == "" {
		return llmtoolkit.Display{}, false
	}
	return llmtoolkit.Display{Kind: kind, Payload: m["payload"]}, true
}

// contentText joins a result's contents as text for the model: text as it
// is, other kinds described in one bracketed line; images, audio and blobs
// that decode are parts instead.
func contentText(contents []mcp.Content) string {
	parts := make([]string, 0, len(contents))
	for _, c := range contents {
		if _, media := contentPart(c); media {
			continue // a part ([contentParts])
		}
		switch c := c.(type) {
		case mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image: %s, %d base64 bytes]", c.MIMEType, len(c.Data)))
		case mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio: %s, %d base64 bytes]", c.MIMEType, len(c.Data)))
		case mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s]", c.URI))
		case mcp.EmbeddedResource:
			if t, ok := c.Resource.(mcp.TextResourceContents); ok {
				parts = append(parts, t.Text)
			} else {
				parts = append(parts, "[embedded resource]")
			}
		case nil:
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n")
}
