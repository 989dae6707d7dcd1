package web

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// Proxy bounds and timeouts.
const (
	// DefaultProxyConns is how many connections a Proxy holds open at
	// once unless told otherwise: one more is answered 503 and closed.
	DefaultProxyConns  = 64
	proxyHeaderTimeout = 10 * time.Second
	proxyIdleTimeout   = 5 * time.Minute // a tunnel or a kept-alive connection with no byte either way
	proxyMaxHeader     = 64 << 10
)

// Proxy is the HTTP proxy through which sandboxed commands reach the hosts
// of an allow-list: CONNECT host:port (HTTPS and any TLS) opens a tunnel,
// and an absolute-form request ("GET http://host/path") is forwarded, each
// through its [Dialer], which decides on the canonical name and refuses
// every other host, every IP address and every non-public address. Every
// refusal is answered with a status (403 for a host or address the policy
// refuses, 502 for a host that cannot be reached, 503 past the bound of
// connections) and a body saying why, logged, and told to the Serve's
// caller. Connections are bounded across every Serve of one Proxy; a
// tunnel or kept-alive connection idle for 5 minutes is closed.
//
// Known limit: a tunnel is opened to the address a listed name resolves
// to, and what flows through it is not read (no TLS is broken), so other
// sites served from that address (virtual hosting, a CDN's domain
// fronting) are reachable through it by a client that names them inside
// TLS or in a Host header; plain requests are rewritten to the host
// checked.
type Proxy struct {
	dial      *Dialer
	slots     chan struct{}
	transport *http.Transport
	log       *slog.Logger
}

// NewProxy returns a proxy dialling through d, holding at most maxConns
// connections at once (0: [DefaultProxyConns]), logging its refusals to
// log (nil: slog's default).
func NewProxy(d *Dialer, maxConns int, log *slog.Logger) *Proxy {
	if maxConns <= 0 {
		maxConns = DefaultProxyConns
	}
	if log == nil {
		log = slog.Default()
	}
	return &Proxy{dial: d, slots: make(chan struct{}, maxConns), log: log, transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		DisableCompression:    true, // the client's Accept-Encoding passes as it is
		MaxIdleConns:          8,
		IdleConnTimeout:       30 * time.Second,
		ResponseHeaderTimeout: 60 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
	}}
}

// Serve serves the proxy's connections accepted on l until ctx ends (the
// command they belong to is gone); then it closes l and every connection
// and tunnel still open, and returns. refused, when not nil, is called with
// the text of each refusal, to be shown where the command's output goes.
func (p *Proxy) Serve(ctx context.Context, l net.Listener, refused func(msg string)) {
	h := &proxyHandler{p: p, refused: refused, tunnels: map[net.Conn]struct{}{}}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: proxyHeaderTimeout,
		IdleTimeout:       proxyIdleTimeout,
		MaxHeaderBytes:    proxyMaxHeader,
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelDebug),
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	stop := context.AfterFunc(ctx, func() {
		_ = srv.Close()
		h.closeTunnels()
	})
	defer stop()
	_ = srv.Serve(&boundedListener{Listener: l, p: p, h: h})
	<-ctx.Done() // Serve ended early (l failed): the command's end still closes the rest
	h.closeTunnels()
}

// proxyHandler serves one Serve's requests.
type proxyHandler struct {
	p       *Proxy
	refused func(string)
	mu      sync.Mutex
	tunnels map[net.Conn]struct{} // hijacked: http.Server no longer closes them
	closed  bool
}

// refuse answers a refusal with its status and text, logs it and tells it.
func (h *proxyHandler) refuse(w http.ResponseWriter, status int, what string, err error) {
	msg := fmt.Sprintf("llmtoolkit sandbox proxy: %s refused: %v", what, err)
	if status == http.StatusBadGateway { // not the policy: the host did not answer
		msg = fmt.Sprintf("llmtoolkit sandbox proxy: %s failed: %v", what, err)
		h.p.log.Debug("sandbox proxy: a connection failed", slog.String("request", what), slog.String("error", err.Error()))
	} else {
		h.p.log.Info("sandbox proxy refused a connection", slog.String("request", what), slog.String("error", err.Error()))
		if h.refused != nil {
			h.refused(msg)
		}
	}
	if w != nil {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Connection", "close")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, msg+"\n")
	}
}

// statusOf is the status of a dial's failure: 403 when the policy refused
// it, 502 when the host could not be reached.
func statusOf(err error, blocked error) int {
	if errors.Is(err, ErrHostNotAllowed) || errors.Is(err, ErrBadHost) || (blocked != nil && errors.Is(err, blocked)) {
		return http.StatusForbidden
	}
	return http.StatusBadGateway
}

func (h *proxyHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodConnect {
		h.connect(w, r)
		return
	}
	what := r.Method + " " + r.URL.Redacted()
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		h.refuse(w, http.StatusBadRequest, what, errors.New("this is the sandbox's HTTP proxy: send absolute http:// requests, or CONNECT host:port for https"))
		return
	}
	port := 80
	if ps := r.URL.Port(); ps != "" {
		var err error
		if port, err = parsePort(ps); err != nil {
			h.refuse(w, http.StatusBadRequest, what, err)
			return
		}
	}
	// Checked here for a clear answer; the dial checks again, on the same
	// canonical name.
	if _, err := h.p.dial.Hosts.Check(r.URL.Hostname(), port); err != nil {
		h.refuse(w, http.StatusForbidden, what, err)
		return
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.Out.URL = pr.In.URL
			pr.Out.Host = "" // the Host header is the URL's, the host checked and dialled
		},
		Transport: h.p.transport,
		ErrorLog:  slog.NewLogLogger(h.p.log.Handler(), slog.LevelDebug),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			h.refuse(w, statusOf(err, h.p.dial.Blocked), what, err)
		},
	}
	rp.ServeHTTP(w, r)
}

// connect opens a tunnel to the CONNECT request's host:port.
func (h *proxyHandler) connect(w http.ResponseWriter, r *http.Request) {
	what := "CONNECT " + r.Host
	target, err := h.p.dial.DialContext(r.Context(), "tcp", r.Host)
	if err != nil {
		h.refuse(w, statusOf(err, h.p.dial.Blocked), what, err)
		return
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		target.Close()
		h.refuse(w, http.StatusInternalServerError, what, errors.New("the connection cannot be taken over"))
		return
	}
	client, buf, err := hj.Hijack()
	if err != nil {
		target.Close()
		return
	}
	if !h.track(client, target) {
		client.Close()
		target.Close()
		return
	}
	defer h.untrack(client, target)
	if _, err := io.WriteString(client, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if n := buf.Reader.Buffered(); n > 0 { // bytes the client sent after the request
		head, _ := buf.Reader.Peek(n)
		if _, err := target.Write(head); err != nil {
			return
		}
	}
	done := make(chan struct{}, 2)
	pipe := func(dst, src net.Conn) {
		defer func() { done <- struct{}{} }()
		defer guard.Recover("sandbox proxy: tunnel copy", nil, nil)
		copyIdle(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go pipe(target, client)
	go pipe(client, target)
	<-done
	<-done
}

// copyIdle copies src to dst until EOF, an error, or proxyIdleTimeout
// without a byte from src.
func copyIdle(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		_ = src.SetReadDeadline(time.Now().Add(proxyIdleTimeout))
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

func (h *proxyHandler) track(cs ...net.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return false
	}
	for _, c := range cs {
		h.tunnels[c] = struct{}{}
	}
	return true
}

func (h *proxyHandler) untrack(cs ...net.Conn) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range cs {
		c.Close()
		delete(h.tunnels, c)
	}
}

func (h *proxyHandler) closeTunnels() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for c := range h.tunnels {
		c.Close()
	}
}

// boundedListener holds a slot of the Proxy per connection; past the
// bound, a connection is answered 503 and closed at once.
type boundedListener struct {
	net.Listener
	p *Proxy
	h *proxyHandler
}

func (l *boundedListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.p.slots <- struct{}{}:
			return &slotConn{Conn: c, slots: l.p.slots}, nil
		default:
		}
		n := cap(l.p.slots)
		l.h.refuse(nil, 0, "a connection", fmt.Errorf("%d connections are open, the most the sandbox's proxy holds at once", n))
		body := "llmtoolkit sandbox proxy: too many connections (at most " + strconv.Itoa(n) + " at once)\n"
		_ = c.SetWriteDeadline(time.Now().Add(time.Second))
		_, _ = io.WriteString(c, "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: "+
			strconv.Itoa(len(body))+"\r\n\r\n"+body)
		c.Close()
	}
}

// slotConn gives its slot back when closed.
type slotConn struct {
	net.Conn
	slots chan struct{}
	once  sync.Once
}

// CloseWrite half-closes a TCP connection (the end of a tunnel's one way).
func (c *slotConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Close()
}

func (c *slotConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { <-c.slots })
	return err
}
