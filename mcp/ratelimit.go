package mcp

import (
	"container/list"
	"context"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/time/rate"

	"github.com/llmtoolkit/llmtoolkit"
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
	// MaxKeys bounds the buckets kept (default [DefaultMaxRateKeys]): at
	// the bound the bucket unused the longest is forgotten, in constant
	// time (forgetting one that is full again changes nothing; one that is
	// not is logged). A bucket is made per tenant, and per tenant and tool
	// only for a call its tenant's bucket let through and a tool the server
	// has: refused calls and unknown names make none.
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
// logged. Memory is bounded: see [RateLimits.MaxKeys]. The skills
// requests of [WithSkills] (skills/list, skills/get,
// resources/directory/read) are bounded per tenant by the Tenant limit, in
// buckets of their own; one over it is a JSON-RPC error whose data holds
// [RateLimitMetaKey].
func WithRateLimits(l RateLimits) Option {
	return func(c *config) { c.rateLimits = &l }
}

// limiter holds the buckets, least recently used last.
type limiter struct {
	cfg   RateLimits
	log   *slog.Logger
	known func(tool string) bool // the server's tools; nil: every name

	mu      sync.Mutex
	buckets map[rateKey]*list.Element // of *bucket
	lru     list.List                 // most recently used first
}

type rateKey struct{ tenant, tool string } // tool "" for the tenant's bucket

type bucket struct {
	key rateKey
	lim *rate.Limiter
	l   Limit
}

// limitRequests adds the rate limits to srv's tools/call; a name r does
// not define gets no bucket of its own.
func limitRequests(srv *sdk.Server, r llmtoolkit.Resolver, l *RateLimits, log *slog.Logger) {
	if l == nil || (!l.Tenant.enabled() && !l.Tool.enabled() && len(l.Tools) == 0) {
		return
	}
	lim := newLimiter(*l, log)
	lim.known = func(name string) bool {
		if r == nil {
			return false
		}
		_, ok := llmtoolkit.FindTool(r, name)
		return ok
	}
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
				msg := fmt.Sprintf("rate limit: too many calls (%s); retry tool %q in %d s", which, name, secs)
				tellRefused(ctx, r, req, log, msg, ErrRateLimited)
				res := textResult(msg, true)
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
	return &limiter{cfg: cfg, log: log, buckets: make(map[rateKey]*list.Element)}
}

// allow takes a token from the tenant's bucket and the tenant's bucket
// for tool, or from neither: it returns 0 when the call may run, else how
// long to wait and which limit refused it. The tool's bucket is looked at
// only once the tenant's lets the call through, and only for a tool the
// server has: a refused call or an unknown name makes no bucket.
func (l *limiter) allow(tenant, tool string, now time.Time) (time.Duration, string) {
	toolLimit := l.cfg.Tool
	if tl, ok := l.cfg.Tools[tool]; ok {
		toolLimit = tl
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var first *rate.Reservation
	if l.cfg.Tenant.enabled() {
		first = l.bucket(rateKey{tenant: tenant}, l.cfg.Tenant).lim.ReserveN(now, 1)
		if d := first.DelayFrom(now); d > 0 {
			first.CancelAt(now) // the refused call takes no token
			return d, "per tenant"
		}
	}
	if !toolLimit.enabled() || (l.known != nil && !l.known(tool)) {
		return 0, ""
	}
	r := l.bucket(rateKey{tenant: tenant, tool: tool}, toolLimit).lim.ReserveN(now, 1)
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		if first != nil {
			first.CancelAt(now)
		}
		return d, "per tenant and tool"
	}
	return 0, ""
}

// bucket returns the bucket of key, found or made, as the most recently
// used; l.mu is held. At MaxKeys the least recently used is forgotten
// first, in constant time: forgetting a bucket that is full again changes
// nothing; forgetting one that is not is logged.
func (l *limiter) bucket(key rateKey, limit Limit) *bucket {
	if e, ok := l.buckets[key]; ok {
		b := e.Value.(*bucket)
		if b.l == limit {
			l.lru.MoveToFront(e)
			return b
		}
		l.lru.Remove(e)
		delete(l.buckets, key)
	}
	if len(l.buckets) >= l.cfg.MaxKeys {
		if e := l.lru.Back(); e != nil {
			old := e.Value.(*bucket)
			l.lru.Remove(e)
			delete(l.buckets, old.key)
			if old.lim.Tokens() < float64(old.l.burst()) {
				l.log.Warn("mcp: rate limit bucket forgotten before it was full: raise RateLimits.MaxKeys",
					slog.String("tenant", old.key.tenant), slog.String("tool", old.key.tool), slog.Int("max_keys", l.cfg.MaxKeys))
			}
		}
	}
	b := &bucket{key: key, lim: rate.NewLimiter(limit.Rate, limit.burst()), l: limit}
	l.buckets[key] = l.lru.PushFront(b)
	return b
}
