package codetools

import (
	"strings"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/web"
)

// httpConfig holds http_get's settings.
type httpConfig struct {
	httpTimeout      time.Duration
	allowPrivate     bool            // let http_get reach loopback and private networks
	allowHosts       map[string]bool // host names (lower case) the network guard lets through
	httpMaxRedirects int
	resolver         web.Resolver // the allow-list's resolver; nil: the system's (tests give a fake)
}

func defaultHTTPConfig() httpConfig {
	return httpConfig{httpTimeout: 30 * time.Second, httpMaxRedirects: 5}
}

// WithHTTPTimeout sets http_get's timeout for a whole request, redirects
// and body included (30 s unless set).
func WithHTTPTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.http.httpTimeout = d
		}
	}
}

// WithAllowPrivateNetworks lets http_get reach loopback, private,
// link-local and other non-public addresses, which its network guard
// refuses by default. Use it for intranets and tests.
func WithAllowPrivateNetworks() Option {
	return func(c *config) { c.http.allowPrivate = true }
}

// WithAllowedHosts lets http_get reach the named hosts (as written in URLs,
// for example "wiki.internal" or "localhost") even when they resolve to
// non-public addresses. Every other host is still guarded.
func WithAllowedHosts(hosts ...string) Option {
	return func(c *config) {
		if c.http.allowHosts == nil {
			c.http.allowHosts = map[string]bool{}
		}
		for _, h := range hosts {
			c.http.allowHosts[strings.ToLower(strings.TrimSuffix(h, "."))] = true
		}
	}
}
