package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// CurrentProtocolVersion is the newest MCP protocol version [Handler],
// [Serve] and [Connect] speak: the stateless lifecycle (no initialize, each
// request carrying its version and the client's capabilities). Every
// earlier version the official SDK supports is spoken too.
const CurrentProtocolVersion = "2026-07-28"

// protocolVersionHeader is the HTTP header of the request's protocol
// version.
const protocolVersionHeader = "Mcp-Protocol-Version"

// sessionIDHeader is the HTTP header of a legacy session's id.
const sessionIDHeader = "Mcp-Session-Id"

// DefaultRetryAfter is the Retry-After a draining [HTTPHandler] sends with
// its 503 answers.
const DefaultRetryAfter = time.Second

// ErrShutdown is returned by [HTTPHandler.Shutdown] when its context ends
// before the calls in flight have finished.
var ErrShutdown = errors.New("mcp: calls still in flight at the end of the shutdown")

// HTTPHandler serves the tools of a resolver over MCP's streamable HTTP
// transport: build it with [Handler]. It is an [http.Handler], safe for
// concurrent use.
//
// A request of the current protocol ([CurrentProtocolVersion], said by its
// Mcp-Protocol-Version header or its _meta) is answered on its own, with
// no session: any replica of the handler can answer it, so any number of
// them can run behind a plain round-robin load balancer with no session
// affinity. A request of an earlier version is served in the session its
// initialize opened, one per client, kept in this process, unless the
// handler was built with [WithStateless].
type HTTPHandler struct {
	stateful        http.Handler
	stateless       http.Handler
	legacyStateless bool
	srv             *sdk.Server
	retryAfter      time.Duration
	log             *slog.Logger

	mu       sync.Mutex
	draining bool
	inflight sync.WaitGroup

	// stopped ends when Shutdown's context ends: the calls still running
	// are cancelled.
	stopped   context.Context
	stopCalls context.CancelFunc

	// ownTasks is the default task store, this handler's own: Shutdown
	// closes it.
	ownTasks *MemoryTaskStore

	// metaPath is where WithBearerAuth's metadata is served, "" without it.
	metaPath string
}

func newHTTPHandler(srv *sdk.Server, ts *taskServer, cfg config) *HTTPHandler {
	stateful := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Logger: cfg.logger, SessionTimeout: cfg.idleTimeout})
	stateless := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Logger: cfg.logger, Stateless: true, PropagateRequestCancellation: true})
	stopped, stopCalls := context.WithCancel(context.Background())
	var statefulNext http.Handler = stateful
	var statelessNext http.Handler = stateless
	var own *MemoryTaskStore
	if ts != nil {
		if ts.ownStore {
			own, _ = ts.store.(*MemoryTaskStore)
		}
		statefulNext = &taskRoutes{next: stateful, ts: ts, srv: srv, log: cfg.warnLogger()}
		statelessNext = &taskRoutes{next: stateless, ts: ts, srv: srv, log: cfg.warnLogger()}
	}
	if cfg.skills != nil {
		ss := newSkillServer(cfg)
		statefulNext = &skillRoutes{next: statefulNext, ss: ss}
		statelessNext = &skillRoutes{next: statelessNext, ss: ss}
	}
	var metaPath string
	if cfg.auth != nil {
		if u, err := metadataURL(cfg.auth.Resource); err == nil {
			metaPath = u.Path
		}
	}
	return &HTTPHandler{
		metaPath:  metaPath,
		stopped:   stopped,
		stopCalls: stopCalls,
		// Authorization and the Origin check (protect) come first on both.
		stateful:        protect(cfg, &sessionCap{next: statefulNext, srv: srv, max: cfg.maxSessions, log: cfg.warnLogger()}),
		stateless:       protect(cfg, statelessNext),
		legacyStateless: cfg.stateless,
		ownTasks:        own,
		srv:             srv,
		retryAfter:      cfg.retryAfter,
		log:             cfg.warnLogger(),
	}
}

// MetadataPath is the path at which the handler answers its protected
// resource metadata (RFC 9728) under [WithBearerAuth], "" without it. A
// handler mounted under a path must be routed this path too, at the root
// of the host, where clients look for it: with Resource
// "https://mcp.example.com/mcp", mount the handler at "/mcp" and at
// "/.well-known/oauth-protected-resource/mcp":
//
//	mux.Handle("/mcp", h)
//	if p := h.MetadataPath(); p != "" {
//		mux.Handle(p, h)
//	}
func (h *HTTPHandler) MetadataPath() string { return h.metaPath }

// ServeHTTP answers one HTTP request of MCP's streamable HTTP transport.
// While the handler shuts down ([HTTPHandler.Shutdown]) it answers every
// request 503 Service Unavailable with a Retry-After, a status clients and
// load balancers retry, on another replica.
func (h *HTTPHandler) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	h.mu.Lock()
	if h.draining {
		h.mu.Unlock()
		w.Header().Set("Retry-After", strconv.Itoa(max(1, int(h.retryAfter.Round(time.Second)/time.Second))))
		http.Error(w, "the MCP server is shutting down: retry, another replica will answer", http.StatusServiceUnavailable)
		return
	}
	// A GET holds a legacy session's stream of notifications, no call:
	// Shutdown does not wait for it, it closes it.
	if req.Method != http.MethodGet {
		h.inflight.Add(1)
		defer h.inflight.Done()
	}
	h.mu.Unlock()
	ctx, cancel := context.WithCancel(req.Context())
	defer cancel()
	defer context.AfterFunc(h.stopped, cancel)()
	req = req.WithContext(ctx)

	if h.legacyStateless || h.currentProtocol(req) {
		h.stateless.ServeHTTP(w, req)
		return
	}
	h.stateful.ServeHTTP(w, req)
}

// currentProtocol reports whether req speaks the current protocol, whose
// requests carry no session: by its Mcp-Protocol-Version header, or, for a
// POST without a session id and without that header, by the protocol
// version in one of its messages' _meta (the stateless handler then
// answers that the header is missing, as the protocol asks).
func (h *HTTPHandler) currentProtocol(req *http.Request) bool {
	if v := req.Header.Get(protocolVersionHeader); v != "" {
		return v >= CurrentProtocolVersion
	}
	if req.Method != http.MethodPost || req.Header.Get(sessionIDHeader) != "" || req.Body == nil {
		return false
	}
	// Peek at the body, at most what the SDK would read, then give it back.
	body, err := io.ReadAll(io.LimitReader(req.Body, sdk.DefaultMaxRequestBodyBytes+1))
	req.Body = readCloser{io.MultiReader(bytes.NewReader(body), req.Body), req.Body}
	if err != nil {
		return false
	}
	return metaProtocolVersion(body) >= CurrentProtocolVersion
}

// metaProtocolVersion returns the highest protocol version named in the
// _meta of the JSON-RPC message or batch in body, or "".
func metaProtocolVersion(body []byte) string {
	type message struct {
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	var msgs []message
	body = bytes.TrimSpace(body)
	if len(body) > 0 && body[0] == '[' {
		if json.Unmarshal(body, &msgs) != nil {
			return ""
		}
	} else {
		var m message
		if json.Unmarshal(body, &m) != nil {
			return ""
		}
		msgs = []message{m}
	}
	var newest string
	for _, m := range msgs {
		if v, ok := m.Params.Meta[sdk.MetaKeyProtocolVersion].(string); ok && v > newest {
			newest = v
		}
	}
	return newest
}

type readCloser struct {
	io.Reader
	io.Closer
}

// Shutdown stops the handler taking requests and waits for those in
// flight to finish, at most until ctx ends. From the moment it is called,
// every new request is answered 503 Service Unavailable with a Retry-After
// ([WithRetryAfter]): behind a load balancer, clients retry on another
// replica. If ctx ends first, the calls still running are cancelled (their
// tools see their context end) and their clients get an error. Then the
// legacy sessions kept in this process are closed (their clients see them
// end and open new ones). It returns nil when every call finished, or an
// error wrapping [ErrShutdown] and ctx's error. The tasks of the default
// store ([MemoryTaskStore]) still running are cancelled: they cannot
// outlive the process. Call it before
// [http.Server.Shutdown], whose own wait then ends at once.
func (h *HTTPHandler) Shutdown(ctx context.Context) error {
	h.mu.Lock()
	h.draining = true
	h.mu.Unlock()
	done := guard.Go("mcp shutdown wait", func() error { h.inflight.Wait(); return nil }, nil)
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("%w: %w", ErrShutdown, ctx.Err())
		h.log.WarnContext(ctx, "mcp: shutdown ended before the calls in flight: cancelling them", slog.Any("error", ctx.Err()))
		h.stopCalls()
	}
	for ss := range h.srv.Sessions() {
		_ = ss.Close() // its client sees the session end, which is all there is to tell
	}
	if h.ownTasks != nil {
		h.ownTasks.Close() // the tasks of this process die with it: no run outlives the handler
	}
	return err
}
