package mcp

import (
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// WithAllowedOrigins makes [Handler] check the Origin header of every
// request, as the MCP specification asks of servers reachable from
// browsers (against DNS rebinding and cross-site requests): a request
// whose Origin is neither the request's own host (same origin) nor one of
// origins ("https://app.example.com", scheme and host as a browser sends
// them) is answered 403 Forbidden and logged. A request without an Origin
// (not from a browser) passes. With no origins, only same-origin browser
// requests pass. It has no effect elsewhere.
//
// The SDK's own DNS-rebinding protection stays on in [Handler]: a request
// that reaches a loopback address with a Host that is not a loopback name
// is refused.
func WithAllowedOrigins(origins ...string) Option {
	return func(c *config) {
		c.originCheck = true
		for _, o := range origins {
			c.origins = append(c.origins, strings.ToLower(strings.TrimRight(o, "/")))
		}
	}
}

// protect wraps the MCP handler h in what the options ask for, outermost
// first: the Origin check, then the bearer authorization.
func protect(cfg config, h http.Handler) http.Handler {
	if cfg.auth != nil {
		h = newBearerAuth(*cfg.auth, h, cfg.warnLogger())
	}
	if cfg.originCheck {
		h = &originCheck{next: h, allowed: cfg.origins, log: cfg.warnLogger()}
	}
	return h
}

// originCheck refuses browser requests from origins not allowed.
type originCheck struct {
	next    http.Handler
	allowed []string
	log     *slog.Logger
}

func (o *originCheck) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	origins := req.Header.Values("Origin")
	if len(origins) == 0 {
		o.next.ServeHTTP(w, req)
		return
	}
	origin := strings.ToLower(strings.TrimRight(origins[0], "/"))
	if len(origins) == 1 && (slices.Contains(o.allowed, origin) || sameOrigin(origin, req.Host)) {
		o.next.ServeHTTP(w, req)
		return
	}
	o.log.WarnContext(req.Context(), "mcp: request refused: its Origin is not allowed",
		slog.String("origin", origins[0]), slog.String("host", req.Host))
	http.Error(w, "this Origin may not call this MCP server", http.StatusForbidden)
}

// sameOrigin reports whether origin names host (the request's Host).
func sameOrigin(origin, host string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return strings.EqualFold(u.Host, host)
}
