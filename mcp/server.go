package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// DisplayMetaKey is the key of a tool result's _meta under which [NewServer]
// sends the tool's [llmtoolkit.Display] and [Client] reads it back.
const DisplayMetaKey = "io.llmtoolkit/display"

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
// protocol error. The text content is the tool's answer, what the model
// reads. A [llmtoolkit.Display] the tool shows is for hosts, not models: it
// travels in the result's _meta under [DisplayMetaKey] as
// {"kind": ..., "payload": {...}}, the payload encoded with its own JSON
// keys (for codetools' kinds, the documented camelCase ones). No
// structuredContent is sent: the MCP specification makes it the structured
// result of a tool that declares an output schema, and clients hand it to
// the model in place of the text. When the client asks for progress (a
// progressToken), what the tool reports with [llmtoolkit.ReportProgress]
// is sent as notifications/progress.
//
// An answer always fits in one MCP message (the Go SDK's clients read at
// most 16 MiB a line): a text longer than 8 MiB once encoded in JSON is
// cut, with a note saying so, and a Display over 4 MiB has its longest
// strings cut, each ending with "... [truncated]", or, when that is not
// enough (or it is nested more than 500 levels deep), is replaced by
// {"truncated": true, "reason": ...}. A call that succeeded stays a
// success. Each cut is logged as a warning, and a panic while answering
// (say in a Display's MarshalJSON) is an error result, not a crash.
//
// The server's name and version are set with [WithName] and [WithVersion].
// Run it with [sdk.Server.Run] on any transport, or use [Serve] and
// [Handler]. Prompts and resources may be added to it with the SDK.
func NewServer(r llmtoolkit.Resolver, opts ...Option) *sdk.Server {
	srv, _ := newServer(r, newConfig(opts))
	return srv
}

// newServer is NewServer, with the tasks extension it serves (nil when
// no tool runs as a task), which Handler answers tasks/* for.
func newServer(r llmtoolkit.Resolver, cfg config) (*sdk.Server, *taskServer) {
	var sopts sdk.ServerOptions
	if cfg.serverOpts != nil {
		sopts = *cfg.serverOpts
	}
	if cfg.instructions != "" || sopts.Instructions == "" {
		sopts.Instructions = cfg.instructions
	}
	if cfg.logger != nil {
		sopts.Logger = cfg.logger
	}
	// Advertise tools even when r has none, so clients know to ask.
	caps := sdk.ServerCapabilities{}
	if sopts.Capabilities != nil {
		caps = *sopts.Capabilities
	}
	caps.Tools = &sdk.ToolCapabilities{ListChanged: true}
	if caps.Prompts == nil {
		// The SDK answers prompts/list (empty until prompts are added with
		// it): say so, as the current protocol asks of a server that does.
		caps.Prompts = &sdk.PromptCapabilities{ListChanged: true}
	}
	//lint:ignore SA1019 deprecated from 2026-07-28 (SEP-2577) but in force for the earlier versions served, where Log sends notifications/message
	if caps.Logging == nil {
		// Any served tool may send log messages ([Log]); a server that
		// sends notifications/message must declare logging.
		//lint:ignore SA1019 as above
		caps.Logging = &sdk.LoggingCapabilities{}
	}
	var ts *taskServer
	signer := newStateSigner(cfg.requestStateKey)
	if r != nil && len(cfg.taskTools) > 0 {
		ts = newTaskServer(cfg, r, signer)
		caps.AddExtension(TasksExtension, map[string]any{})
	}
	var ss *skillServer
	if cfg.skills != nil {
		ss = newSkillServer(cfg)
		if caps.Resources == nil {
			caps.Resources = &sdk.ResourceCapabilities{}
		}
		caps.AddExtension(SkillsExtension, map[string]any{"directoryRead": true})
	}
	sopts.Capabilities = &caps
	srv := sdk.NewServer(&sdk.Implementation{Name: cfg.name, Version: cfg.version}, &sopts)
	if ts != nil {
		// Added first, it runs last: after the authorization and the
		// rate limits, with the caller's identity and tools in ctx.
		srv.AddReceivingMiddleware(ts.middleware)
	}
	if ss != nil {
		srv.AddReceivingMiddleware(ss.middleware)
		srv.AddResourceTemplate(ss.template())
	}
	extractTraceContext(srv, cfg.propagator)
	// The last added runs first: the identity is found before the rate is
	// checked.
	limitRequests(srv, r, cfg.rateLimits, cfg.warnLogger())
	authorizeRequests(srv, r, cfg.auth, cfg.warnLogger())
	if r == nil {
		return srv, nil
	}
	tools := r.Tools()
	r = llmtoolkit.Indexed(r, tools)
	if ts != nil {
		ts.r = r
	}
	seen := make(map[string]bool)
	served := make(map[string]bool, len(tools))
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
		h := toolHandler(r, t.Name, signer, cfg.warnLogger())
		srv.AddTool(st, h)
		served[t.Name] = true
		if ts != nil {
			ts.handlers[t.Name] = h
		}
	}
	srv.AddReceivingMiddleware(auditUnknownTools(r, served))
	if ts != nil {
		ts.store.Bind(ts.run)
	}
	return srv, ts
}

// Serve runs an MCP server for r (see [NewServer]) on transport until the
// client ends the session or ctx is cancelled, in which case it returns
// ctx's error. For a command serving its standard input and output, pass
// [StdioTransport]().
//
// The SDK's *sdk.StdioTransport and *sdk.IOTransport are served as a
// [LineTransport] on the same input and output (an IOTransport's reader
// and writer are closed with the session, as the SDK does), so that a
// malformed line is answered with a JSON-RPC error instead of ending the
// session; their MaxLineLength applies, a negative one meaning the
// default, 16 MiB. Other transports are used as they are.
func Serve(ctx context.Context, r llmtoolkit.Resolver, transport sdk.Transport, opts ...Option) error {
	cfg := newConfig(opts)
	transport = lineTransportFor(transport, cfg.warnLogger())
	if lt, ok := transport.(*LineTransport); ok && cfg.skills != nil {
		// The SDK answers the skills extension's own methods with "method
		// not found" before any middleware: the transport answers them.
		c := *lt
		ss := newSkillServer(cfg)
		c.methods = ss.safeAnswer
		transport = &c
	}
	return NewServer(r, opts...).Run(ctx, transport)
}

// lineTransportFor returns the LineTransport that serves the SDK's stream
// transports, or transport itself.
func lineTransportFor(transport sdk.Transport, log *slog.Logger) sdk.Transport {
	switch t := transport.(type) {
	case *sdk.StdioTransport:
		return &LineTransport{MaxLineLength: t.MaxLineLength, Logger: log}
	case *sdk.IOTransport:
		return &LineTransport{Reader: t.Reader, Writer: t.Writer, MaxLineLength: t.MaxLineLength, Logger: log, closeWriter: true}
	case *LineTransport:
		if t.Logger == nil {
			c := *t
			c.Logger = log
			return &c
		}
	}
	return transport
}

// Handler returns an [HTTPHandler] that serves the tools of r over MCP's
// streamable HTTP transport, all its clients sharing one server (see
// [NewServer]).
//
// It speaks the current protocol ([CurrentProtocolVersion]) and every
// earlier one the official SDK supports, with no option. A client of the
// current protocol holds no session: each request is answered on its own,
// by any replica. A legacy client (one that sends initialize) gets a
// session kept in this process, unless [WithStateless] is given.
//
// Sessions are bounded: one that receives no request for the idle timeout
// ([WithSessionIdleTimeout], default [DefaultSessionIdleTimeout]) is closed
// and forgotten, so clients that leave without a DELETE do not hold memory,
// and a request that would open a session beyond the cap ([WithMaxSessions],
// default [DefaultMaxSessions]) is answered 503 Service Unavailable with a
// Retry-After, and logged.
//
// To stop a replica without failing its calls, call
// [HTTPHandler.Shutdown] before the http.Server's own Shutdown.
func Handler(r llmtoolkit.Resolver, opts ...Option) *HTTPHandler {
	cfg := newConfig(opts)
	srv, ts := newServer(r, cfg)
	return newHTTPHandler(srv, ts, cfg)
}

// sessionCap refuses a request that would open a session (one without a
// session id) while the server has max live sessions.
type sessionCap struct {
	next http.Handler
	srv  *sdk.Server
	max  int
	log  *slog.Logger
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method == http.MethodPost && req.Header.Get("Mcp-Session-Id") == "" {
		live := 0
		for range c.srv.Sessions() {
			live++
			if live >= c.max {
				c.log.WarnContext(req.Context(), "mcp: new session refused: too many live sessions",
					slog.Int("max", c.max))
				w.Header().Set("Retry-After", "60")
				http.Error(w, fmt.Sprintf("the server has %d live MCP sessions, its limit: retry later", c.max),
					http.StatusServiceUnavailable)
				return
			}
		}
	}
	c.next.ServeHTTP(w, req)
}

// toolHandler answers tools/call for one tool through llmtoolkit.Execute.
// The answer fits in one MCP frame (see maxTextBytes). The handler runs on
// the SDK's goroutines, which recover nothing: a panic outside the tool
// (Execute rescues the tool's own) becomes an error result, not the end of
// the process.
func toolHandler(r llmtoolkit.Resolver, name string, signer stateSigner, log *slog.Logger) sdk.ToolHandler {
	return func(ctx context.Context, req *sdk.CallToolRequest) (out *sdk.CallToolResult, err error) {
		defer func() {
			if p := recover(); p != nil {
				log.ErrorContext(ctx, "mcp: answering a tool call panicked",
					slog.String("tool", name), slog.String("panic_type", fmt.Sprintf("%T", p)), slog.String("stack", string(debug.Stack())))
				msg := textutil.CutUTF8(fmt.Sprint(p), 1024)
				out, err = textResult(fmt.Sprintf("internal error of the MCP server while answering tool %q: %s", name, msg), true), nil
			}
		}()
		var raw json.RawMessage
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		call, err := llmtoolkit.ParseCall("", name, string(raw))
		if err != nil {
			return textResult(err.Error(), true), nil
		}
		call.ID = boundCallID(callID(ctx, req, log), call.Arguments)
		if req != nil && req.Params != nil && req.Session != nil && req.Params.GetProgressToken() != nil {
			token := req.Params.GetProgressToken()
			ctx = llmtoolkit.WithListeners(ctx, llmtoolkit.Listeners{Progress: func(p llmtoolkit.Progress) {
				err := req.Session.NotifyProgress(ctx, &sdk.ProgressNotificationParams{
					ProgressToken: token, Progress: p.Progress, Total: p.Total, Message: p.Message})
				if err != nil {
					log.WarnContext(ctx, "mcp: progress not sent", slog.String("tool", name), slog.Any("error", err))
				}
			}})
		}
		ctx = withSession(ctx, req)
		if ctx, err = signer.withCallInput(ctx, req); err != nil {
			return nil, err
		}
		res := llmtoolkit.Execute(ctx, callerResolver(ctx, r), call)
		if res.Err != nil {
			if out, perr, ok := signer.protocolAnswer(ctx, res.Err); ok {
				return out, perr
			}
			if TaskIDFrom(ctx) != "" && errors.Is(res.Err, llmtoolkit.ErrToolPanic) {
				// In a task a panic is the server's failure, not the
				// tool's answer: the task fails (its value is not sent:
				// it may quote a secret).
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("tool %q panicked", name)}
			}
		}
		text, cut := capResultText(res.Content)
		if cut {
			log.WarnContext(ctx, "mcp: tool answer cut to fit in one MCP message",
				slog.String("tool", name), slog.Int("bytes", len(res.Content)), slog.Int("sent", len(text)))
		}
		out = textResult(text, res.IsError)
		used := jsonStringLen(text)
		if res.Display != nil {
			data, cut, err := displayJSON(*res.Display, maxDisplayBytes)
			switch {
			case err != nil:
				log.WarnContext(ctx, "mcp: display not sent: it cannot be encoded as JSON",
					slog.String("tool", name), slog.String("kind", res.Display.Kind), slog.Any("error", err))
			case cut:
				log.WarnContext(ctx, "mcp: display cut to fit in one MCP message",
					slog.String("tool", name), slog.String("kind", res.Display.Kind), slog.Int("sent", len(data)))
				fallthrough
			default:
				out.Meta = sdk.Meta{DisplayMetaKey: data}
				used += len(data)
			}
		}
		addParts(ctx, log, name, out, res.Parts, used)
		return out, nil
	}
}

// CallIDMetaKey is the key of a tools/call request's _meta under which a
// client names the call, the same on each of its retries (the JSON-RPC
// request id changes): [NewServer] makes it, bound to the call's
// arguments, the [llmtoolkit.Call.ID] of the call its tool receives: the
// client's ID, "#", and the first 16 hex digits of the SHA-256 of the
// arguments as canonical JSON ("call-1#9f86d081884c7d65"). A
// trace.Recorder records that as the row's call_id, and
// trace.WithIdempotentCalls keeps one completed row per call: a retry
// (same ID, same arguments) keeps its ID, while a different call sent
// under a reused ID gets another and leaves its own row. [Client] sends
// the call's [llmtoolkit.IdempotencyKey] there. It is the client's word:
// at most [MaxCallIDBytes] of text.
const CallIDMetaKey = "io.llmtoolkit/call-id"

// MaxCallIDBytes caps the call ID a client gives under [CallIDMetaKey];
// a longer one is ignored (and logged): the call has no ID.
const MaxCallIDBytes = 256

// callID is the call's ID given by the client under CallIDMetaKey, or "".
func callID(ctx context.Context, req *sdk.CallToolRequest, log *slog.Logger) string {
	if req == nil || req.Params == nil {
		return ""
	}
	v, ok := req.Params.Meta[CallIDMetaKey]
	if !ok {
		return ""
	}
	id, ok := v.(string)
	if !ok || len(id) > MaxCallIDBytes {
		log.WarnContext(ctx, "mcp: the call's id in _meta is ignored: it must be a string of at most MaxCallIDBytes",
			slog.String("key", CallIDMetaKey), slog.String("type", fmt.Sprintf("%T", v)), slog.Int("max_bytes", MaxCallIDBytes))
		return ""
	}
	return id
}

func textResult(text string, isError bool) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}, IsError: isError}
}
