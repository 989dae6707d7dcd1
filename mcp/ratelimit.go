package mcp

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"
)

// RateLimitMetaKey is the key of an error result's _meta under which a
// server with [WithRateLimits] says, in whole seconds, when a refused call
// may be tried again.
const RateLimitMetaKey = "io.llmtoolkit/retryAfterSeconds"

// Limit is a token bucket: Rate calls a second on average, up to Burst at
// once. The zero Limit limits nothing.
type Limit struct {
	Rate  rate.Limit
	Burst int
}

// enabled reports whether l limits anything.
func (l Limit) enabled() bool { return l.Rate > 0 && l.Rate != rate.Inf }

// burst returns the bucket's size (at least 1).
func (l Limit) burst() int { return max(l.Burst, 1) }

// DefaultMaxRateKeys is how many buckets [WithRateLimits] keeps at most
// unless [RateLimits.MaxKeys] says otherwise.
const DefaultMaxRateKeys = 100_000

// RateLimits configures [WithRateLimits]. The tenant is the caller's
// [Identity] tenant under [WithBearerAuth]; without it every call shares
// one tenant, "".
type RateLimits struct {
	// Tenant bounds the calls of each tenant, all tools together.
	Tenant Limit
	// Tool bounds the calls of each tenant to each tool.
	Tool Limit
	// Tools replaces Tool for the tools it names.
	Tools map[string]Limit
	// MaxKeys bounds the buckets kept (default [DefaultMaxRateKeys]). A
	// bucket is forgotten once it is full again (forgetting it changes
	// nothing); when that is not enough, the longest unused is forgotten,
	// which is logged.
	MaxKeys int
}

// WithRateLimits bounds the tool calls of a server ([NewServer], [Serve],
// [Handler]) per tenant and per tenant and tool, with token buckets
// (golang.org/x/time/rate). A call over a limit does not run: it is
// answered with an error result (isError, as MCP asks of a tool's
// failures, so the model reads it and the session goes on, never an HTTP
// 429 that would fail the whole request) whose text says which limit and
// when to retry, and whose _meta holds the seconds to wait under
// [RateLimitMetaKey]. A refused call takes no token from the other
// bucket, and one tenant's calls never slow another's. Refusals are
// logged. Memory is bounded: see [RateLimits.MaxKeys].
func WithRateLimits(l RateLimits) Option {
	return func(c *config) { c.rateLimits = &l }
}

// limiter holds the buckets.
type limiter struct {
	cfg RateLimits
	log *slog.Logger

	mu      sync.Mutex
	buckets map[rateKey]*bucket
}

type rateKey struct{ tenant, tool string } // tool "" for the tenant's bucket

type bucket struct {
	lim  *rate.Limiter
	l    Limit
	used time.Time
}

// limitRequests adds the rate limits to srv's tools/call.
func limitRequests(srv *sdk.Server, l *RateLimits, log *slog.Logger) {
	if l == nil || (!l.Tenant.enabled() && !l.Tool.enabled() && len(l.Tools) == 0) {
		return
	}
	lim := newLimiter(*l, log)
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if method != "tools/call" {
				return next(ctx, method, req)
			}
			name := ""
			if cr, ok := req.(*sdk.CallToolRequest); ok && cr.Params != nil {
				name = cr.Params.Name
			}
			tenant := ""
			if id, ok := IdentityFrom(ctx); ok {
				tenant = id.Tenant
			}
			if wait, which := lim.allow(tenant, name, time.Now()); wait > 0 {
				secs := int(math.Ceil(wait.Seconds()))
				log.WarnContext(ctx, "mcp: tool call refused: over its rate limit",
					slog.String("tenant", tenant), slog.String("tool", name), slog.String("limit", which), slog.Int("retry_after_s", secs))
				res := textResult(fmt.Sprintf("rate limit: too many calls (%s); retry tool %q in %d s", which, name, secs), true)
				res.Meta = sdk.Meta{RateLimitMetaKey: secs}
				return res, nil
			}
			return next(ctx, method, req)
		}
	})
}

func newLimiter(cfg RateLimits, log *slog.Logger) *limiter {
	if cfg.MaxKeys <= 0 {
		cfg.MaxKeys = DefaultMaxRateKeys
	}
	return &limiter{cfg: cfg, log: log, buckets: make(map[rateKey]*bucket)}
}

// allow takes a token from the tenant's bucket and the tenant's bucket
// for tool, or from neither: it returns 0 when the call may run, else how
// long to wait and which limit refused it.
func (l *limiter) allow(tenant, tool string, now time.Time) (time.Duration, string) {
	toolLimit := l.cfg.Tool
	if tl, ok := l.cfg.Tools[tool]; ok {
		toolLimit = tl
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var rs []*rate.Reservation
	var whiches []string
	for _, k := range []struct {
		key   rateKey
		limit Limit
		which string
	}{
		{rateKey{tenant: tenant}, l.cfg.Tenant, "per tenant"},
		{rateKey{tenant: tenant, tool: tool}, toolLimit, "per tenant and tool"},
	} {
		if !k.limit.enabled() {
			continue
		}
		b := l.bucket(k.key, k.limit, now)
		rs = append(rs, b.lim.ReserveN(now, 1))
		whiches = append(whiches, k.which)
	}
	var wait time.Duration
	which := ""
	for i, r := range rs {
		if d := r.DelayFrom(now); d > wait {
			wait, which = d, whiches[i]
		}
	}
	if wait > 0 {
		for _, r := range rs {
			r.CancelAt(now) // the refused call takes no token
		}
	}
	return wait, which
}

// bucket returns the bucket of key, made or found; l.mu is held.
func (l *limiter) bucket(key rateKey, limit Limit, now time.Time) *bucket {
	if b, ok := l.buckets[key]; ok && b.l == limit {
		b.used = now
		return b
	}
	if len(l.buckets) >= l.cfg.MaxKeys {
		l.evict(now)
	}
	b := &bucket{lim: rate.NewLimiter(limit.Rate, limit.burst()), l: limit, used: now}
	l.buckets[key] = b
	return b
}

// evict forgets the buckets that are full again (a new one would be the
// same), or else the one unused the longest; l.mu is held.
func (l *limiter) evict(now time.Time) {
	for k, b := range l.buckets {
		if b.lim.TokensAt(now) >= float64(b.l.burst()) {
			delete(l.buckets, k)
		}
	}
	if len(l.buckets) < l.cfg.MaxKeys {
		return
	}
	var oldest rateKey
	var at time.Time
	for k, b := range l.buckets {
		if at.IsZero() || b.used.Before(at) {
			oldest, at = k, b.used
		}
	}
	delete(l.buckets, oldest)
	l.log.Warn("mcp: rate limit bucket forgotten before it was full: raise RateLimits.MaxKeys",
		slog.String("tenant", oldest.tenant), slog.String("tool", oldest.tool), slog.Int("max_keys", l.cfg.MaxKeys))
}
