package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrRemoteTool is wrapped by the error of a remote call the MCP server
// answered with a result marked isError (see [ToolError]).
var ErrRemoteTool = errors.New("remote tool failed")

// ToolError is the error [Client.Resolve] returns when the MCP server
// answers a call with a result marked isError. Its message is the
// result's text, as the server wrote it, so that the model sees it
// unchanged. It wraps [ErrRemoteTool].
type ToolError struct {
	// Tool is the tool's name.
	Tool string
	// Message is the text of the error result.
	Message string
}

// Error returns the server's message, or says that there was none.
func (e *ToolError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("tool %q failed on the MCP server without a message", e.Tool)
	}
	return e.Message
}

// Unwrap returns [ErrRemoteTool].
func (e *ToolError) Unwrap() error { return ErrRemoteTool }

// Client is an [llmtoolkit.Resolver] over a remote MCP server: Tools lists
// the server's tools and Resolve calls them with tools/call. Build it with
// [Connect] and end the session with [Client.Close]. It is safe for
// concurrent use, and composes with local tools through
// [llmtoolkit.Compose].
type Client struct {
	session  *sdk.ClientSession
	server   string
	log      *slog.Logger
	progress *progressRouter

	maxPages       int          // see WithMaxToolPages
	maxTools       int          // see WithMaxTools
	maxSchemaNodes int          // see WithMaxSchemaNodes
	bound          *answerBound // see WithMaxAnswerBytes
	tasks          *taskRPC     // see WithClientTasks; nil without it
	ext            extSender    // the skills extension's requests; nil on other transports

	mu     sync.RWMutex
	tools  []llmtoolkit.Tool
	byName map[string]int
}

// Connect starts an MCP session over transport (see [CommandTransport],
// [HTTPTransport], or any [sdk.Transport]) and lists the server's tools,
// through every page, once. [Client.Tools] serves that list without a
// round trip; call [Client.Refresh] when the server's tools change.
//
// A remote tool that cannot be used as an [llmtoolkit.Tool] (a name
// providers reject, such as one with a '.', or a schema that does not
// compile) is skipped with a warning on the logger: a model could not call
// it correctly, and the server validates arguments itself anyway. A tool
// without a description gets its title or a generic one.
//
// The client's name and version are set with [WithName] and [WithVersion].
// ctx bounds the connection and the first listing only, not the session.
func Connect(ctx context.Context, transport sdk.Transport, opts ...Option) (*Client, error) {
	if transport == nil {
		return nil, errors.New("mcp: Connect needs a transport: use CommandTransport, HTTPTransport or an SDK transport")
	}
	cfg := newConfig(opts)
	transport, err := oauthTransport(transport, cfg.oauth)
	if err != nil {
		return nil, err
	}
	bound := &answerBound{limit: int64(cfg.maxAnswerBytes)}
	transport = boundTransport(transport, bound)
	var copts sdk.ClientOptions
	if cfg.clientOpts != nil {
		copts = *cfg.clientOpts
	}
	if cfg.logger != nil {
		copts.Logger = cfg.logger
	}
	progress := newProgressRouter(cfg.warnLogger())
	if theirs := copts.ProgressNotificationHandler; theirs != nil {
		copts.ProgressNotificationHandler = func(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress.handle(ctx, req.Params)
			theirs(ctx, req)
		}
	} else {
		copts.ProgressNotificationHandler = func(ctx context.Context, req *sdk.ProgressNotificationClientRequest) {
			progress.handle(ctx, req.Params)
		}
	}
	var follower *taskFollower
	if cfg.clientTasks {
		transport, follower = clientTasksTransport(transport, &copts)
	}
	client := sdk.NewClient(&sdk.Implementation{Name: cfg.name, Version: cfg.version}, &copts)
	injectTraceContext(client, cfg.propagator)
	lc := &lineCaller{}
	session, err := client.Connect(ctx, clientTransportFor(transport, cfg.warnLogger(), bound, lc), nil)
	if err != nil {
		return nil, fmt.Errorf("mcp: connecting to the MCP server: %w", bound.wrap(err))
	}
	bound.setOnHit(func() { _ = session.Close() })
	c := &Client{session: session, server: "(unnamed)", log: cfg.warnLogger(), progress: progress,
		maxPages: cfg.maxToolPages, maxTools: cfg.maxTools, maxSchemaNodes: cfg.maxSchemaNodes, bound: bound}
	if follower != nil {
		c.tasks = &taskRPC{endpoint: follower.endpoint, next: follower.next, session: session,
			impl: &sdk.Implementation{Name: cfg.name, Version: cfg.version}, maxBytes: int64(cfg.maxAnswerBytes)}
	}
	if t, ok := transport.(*sdk.StreamableClientTransport); ok {
		next := http.DefaultTransport
		if t.HTTPClient != nil && t.HTTPClient.Transport != nil {
			next = t.HTTPClient.Transport
		}
		c.ext = &taskRPC{endpoint: t.Endpoint, next: next, session: session, ext: SkillsExtension,
			impl: &sdk.Implementation{Name: cfg.name, Version: cfg.version}, maxBytes: int64(cfg.maxAnswerBytes)}
	} else if lc.attached() {
		lc.session, lc.impl = session, &sdk.Implementation{Name: cfg.name, Version: cfg.version}
		c.ext = lc
	}
	if init := session.InitializeResult(); init != nil && init.ServerInfo != nil && init.ServerInfo.Name != "" {
		c.server = init.ServerInfo.Name
	}
	if err := c.Refresh(ctx); err != nil {
		_ = session.Close()
		return nil, err
	}
	return c, nil
}

// Server returns the name the MCP server announced, or "(unnamed)".
func (c *Client) Server() string { return c.server }

// Session returns the underlying SDK session, for what this package does
// not cover (prompts, resources).
func (c *Client) Session() *sdk.ClientSession { return c.session }

// ErrListLimit is wrapped by the error of a [Connect] or [Client.Refresh]
// whose tool listing went past one of the client's bounds: more pages than
// [WithMaxToolPages], more tools than [WithMaxTools], or a cursor the
// server had already sent (a loop).
var ErrListLimit = errors.New("mcp: the MCP server's tool list is past this client's bounds")

// Refresh lists the server's tools again, through every page, and replaces
// the list [Client.Tools] returns. On error the previous list is kept.
// A [llmtoolkit.Composition] built earlier keeps the tools it indexed then.
//
// The listing is bounded whatever the server sends: at most
// [WithMaxToolPages] pages (100 by default) and [WithMaxTools] tools (1,000
// by default, every tool sent counted, skipped ones included), and a
// cursor the server sends twice ends it; each is an error wrapping
// [ErrListLimit] that names the server and the bound.
func (c *Client) Refresh(ctx context.Context) error {
	var tools []llmtoolkit.Tool
	byName := make(map[string]int)
	seen := make(map[string]bool)
	cursor, received := "", 0
	for page := 1; ; page++ {
		if page > c.maxPages {
			return fmt.Errorf("%w: MCP server %q sent more than %d pages of tools; raise WithMaxToolPages if it is trusted", ErrListLimit, c.server, c.maxPages)
		}
		res, err := c.session.ListTools(ctx, &sdk.ListToolsParams{Cursor: cursor})
		if err != nil {
			return fmt.Errorf("mcp: listing the tools of MCP server %q: %w", c.server, c.bound.wrap(err))
		}
		received += len(res.Tools)
		if received > c.maxTools {
			return fmt.Errorf("%w: MCP server %q listed more than %d tools; raise WithMaxTools if it is trusted", ErrListLimit, c.server, c.maxTools)
		}
		for _, st := range res.Tools {
			c.addTool(ctx, st, &tools, byName)
		}
		if res.NextCursor == "" {
			break
		}
		if seen[res.NextCursor] {
			return fmt.Errorf("%w: MCP server %q sent the cursor %.64q a second time (page %d): its pages loop", ErrListLimit, c.server, res.NextCursor, page)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
	c.mu.Lock()
	c.tools, c.byName = tools, byName
	c.mu.Unlock()
	return nil
}

// addTool converts one listed tool and adds it to tools, skipping with a
// warning a duplicate or one that cannot be used.
func (c *Client) addTool(ctx context.Context, st *sdk.Tool, tools *[]llmtoolkit.Tool, byName map[string]int) {
	if st == nil {
		return
	}
	if _, dup := byName[st.Name]; dup {
		return
	}
	t, err := fromSDKTool(st, c.server, c.maxSchemaNodes)
	if err != nil {
		c.log.WarnContext(ctx, "mcp: remote tool skipped",
			slog.String("server", c.server), slog.String("tool", st.Name), slog.Any("error", err))
		return
	}
	byName[t.Name] = len(*tools)
	*tools = append(*tools, t)
}

// Tools returns the server's tools as listed at [Connect] or the last
// [Client.Refresh]. The slice is shared: do not modify it. Each tool's
// Metadata["server"] is the server's name ([Client.Server]), the field
// package toolsearch searches as the tool's server (toolsearch.MetadataServer).
func (c *Client) Tools() []llmtoolkit.Tool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tools
}

// LookupTool returns the listed tool called name.
func (c *Client) LookupTool(name string) (llmtoolkit.Tool, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.byName[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return c.tools[i], true
}

// Resolve calls the tool on the server with tools/call and returns its text
// contents joined by newlines. Image, audio and blob contents are
// attached as parts ([llmtoolkit.Attach]: [llmtoolkit.Execute] puts them
// on the result's Parts); where nothing would keep them (Resolve called
// outside Execute with no [llmtoolkit.Listeners].Parts), each is described
// in the text in its place instead, in brackets, such as
// "[image: image/png, 1024 bytes]"; a resource link is always such a line.
//
// A name the server did not list is refused with an error wrapping
// [llmtoolkit.ErrUnknownTool], so that a composition passes the call on. A
// result marked isError becomes a [*ToolError] carrying the server's text.
// When ctx has a progress function (see [llmtoolkit.ReportProgress]), the
// call asks the server for progress, and each notifications/progress it
// sends while the call runs is passed on to that function (after the call
// returns, late ones are dropped). A call with an ID sends its
// [llmtoolkit.IdempotencyKey] in the request's _meta under
// [CallIDMetaKey], the call's ID on a server of this package. The Display
// a server sends in the
// result's _meta under [DisplayMetaKey]
// (as [NewServer] does) is shown with [llmtoolkit.Show]. Without one,
// structured content is shown instead: as the Display itself when it has
// the shape older llmtoolkit servers sent ({"kind", "payload"}), otherwise
// under kind "mcp". Its payload is the JSON as decoded (a map[string]any),
// whatever the server's tool: this package knows no tool's types. A host
// that wants the Go types of the built-in tools' kinds passes the Display
// to codetools.DecodeDisplay. A transport or protocol failure is an error that names
// the server and the tool and wraps the SDK's error.
func (c *Client) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	if _, ok := c.LookupTool(call.Name); !ok {
		return "", fmt.Errorf("%w: %s (not listed by MCP server %q)", llmtoolkit.ErrUnknownTool, call.Name, c.server)
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	params := &sdk.CallToolParams{Name: call.Name, Arguments: args}
	if call.ID != "" {
		// The same on each retry of the call, unlike the request's id.
		params.Meta = sdk.Meta{CallIDMetaKey: llmtoolkit.IdempotencyKey(ctx, call)}
	}
	if fn := llmtoolkit.ListenersFrom(ctx).Progress; fn != nil {
		token, end := c.progress.add(fn)
		defer end()
		params.SetProgressToken(token)
	}
	res, err := c.session.CallTool(ctx, params)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		err = c.bound.wrap(err)
		return "", fmt.Errorf("mcp: calling tool %q on MCP server %q: %w", call.Name, c.server, err)
	}
	if d, ok := resultDisplay(res); ok {
		llmtoolkit.Show(ctx, d)
	}
	kept := llmtoolkit.PartsKept(ctx)
	text := contentText(res.Content, !kept)
	if kept {
		llmtoolkit.Attach(ctx, contentParts(res.Content)...)
	}
	if res.IsError {
		return "", &ToolError{Tool: call.Name, Message: text}
	}
	return text, nil
}

// Close ends the MCP session (and, for [CommandTransport], lets the
// server's process exit).
func (c *Client) Close() error {
	if err := c.session.Close(); err != nil {
		return fmt.Errorf("mcp: closing the session with MCP server %q: %w", c.server, err)
	}
	return nil
}
