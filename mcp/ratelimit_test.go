package mcp

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestRateLimitPerTenant: a tenant over its rate gets an error result
// saying when to retry (with the seconds in _meta) and its call does not
// run; another tenant on the same server is not slowed; a tool's own
// limit applies per tenant and tool.
func TestRateLimitPerTenant(t *testing.T) {
	db, err := trace.OpenSQLite(t.TempDir() + "/traces.db")
	require.NoError(t, err)
	s := newAuthServer(t, db, WithRateLimits(RateLimits{
		Tenant: Limit{Rate: rate.Every(time.Hour), Burst: 3},
		Tools:  map[string]Limit{"poke": {Rate: rate.Every(time.Hour), Burst: 1}},
	}))
	a, b := uuid.NewString(), uuid.NewString()
	s.migrate(t, a)
	s.migrate(t, b)
	tokenA := s.is.sign(t, s.is.claims(a, uuid.NewString(), scopeTools, scopeWrite))
	tokenB := s.is.sign(t, s.is.claims(b, uuid.NewString(), scopeTools, scopeWrite))
	sidA, sidB := s.open(t, tokenA), s.open(t, tokenB)

	call := func(token, sid, tool string) string {
		resp, body := s.callTool(t, token, sid, tool, nil)
		require.Equal(t, http.StatusOK, resp.StatusCode, body)
		return body
	}
	assert.Contains(t, call(tokenA, sidA, "poke"), "poked")
	over := call(tokenA, sidA, "poke") // poke's own bucket (1) is empty
	assert.Contains(t, over, `"isError":true`)
	assert.Contains(t, over, "per tenant and tool")
	assert.Contains(t, over, `"`+RateLimitMetaKey+`":`)
	assert.Contains(t, call(tokenA, sidA, "peek"), "peeked") // the refusal took no tenant token
	assert.Contains(t, call(tokenA, sidA, "peek"), "peeked")
	over = call(tokenA, sidA, "peek") // the tenant's bucket (3) is empty
	assert.Contains(t, over, `"isError":true`)
	assert.Contains(t, over, "per tenant)")

	// B is not slowed by A.
	start := time.Now()
	assert.Contains(t, call(tokenB, sidB, "poke"), "poked")
	assert.Contains(t, call(tokenB, sidB, "peek"), "peeked")
	assert.Contains(t, call(tokenB, sidB, "peek"), "peeked")
	assert.Less(t, time.Since(start), 10*time.Second)

	assert.Len(t, s.fake.CallsTo("poke"), 2)
	assert.Len(t, s.fake.CallsTo("peek"), 4)
	assert.Len(t, s.rows(t, a), 5, "refused calls did not run, and have their refused rows")
	assert.Len(t, s.rows(t, b), 3)
}

// TestRateLimiterMemoryBounded: buckets stay under MaxKeys however many
// tenants call; a full bucket is forgotten first.
func TestRateLimiterMemoryBounded(t *testing.T) {
	l := newLimiter(RateLimits{Tenant: Limit{Rate: 1000, Burst: 1}, MaxKeys: 100}, slog.New(slog.DiscardHandler))
	now := time.Now()
	for i := range 10_000 {
		wait, _ := l.allow(uuid.NewString(), "peek", now.Add(time.Duration(i)*time.Microsecond))
		require.Zero(t, wait)
	}
	assert.LessOrEqual(t, len(l.buckets), 100)
	// A tenant over its rate stays limited while its bucket is kept.
	l2 := newLimiter(RateLimits{Tenant: Limit{Rate: rate.Every(time.Hour), Burst: 1}, MaxKeys: 100}, slog.New(slog.DiscardHandler))
	wait, _ := l2.allow("a", "x", now)
	require.Zero(t, wait)
	wait, which := l2.allow("a", "x", now)
	assert.Greater(t, wait, 59*time.Minute)
	assert.Equal(t, "per tenant", which)
}
