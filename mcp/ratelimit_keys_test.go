package mcp

import (
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"
)

// TestRateLimiterKeysBounded: the limiter made a per-tool bucket for
// every name a caller sent, known or not, and for calls its tenant's
// bucket refused; at MaxKeys each new key was a scan of every bucket under
// the one lock. Now an unknown name or a refused call makes no bucket, and
// a new key at the bound forgets the least recently used in constant time.
func TestRateLimiterKeysBounded(t *testing.T) {
	quiet := slog.New(slog.DiscardHandler)
	known := func(name string) bool { return name == "peek" }
	now := time.Now()

	t.Run("unknown names", func(t *testing.T) {
		l := newLimiter(RateLimits{Tool: Limit{Rate: 10, Burst: 10}}, quiet)
		l.known = known
		for i := range 10_000 {
			wait, _ := l.allow("a", fmt.Sprintf("no_such_tool_%d", i), now)
			require.Zero(t, wait)
		}
		assert.Equal(t, 0, len(l.buckets), "no bucket for a name the server does not have")
		wait, _ := l.allow("a", "peek", now)
		require.Zero(t, wait)
		assert.Equal(t, 1, len(l.buckets))
	})
	t.Run("refused calls", func(t *testing.T) {
		l := newLimiter(RateLimits{Tenant: Limit{Rate: rate.Every(time.Hour), Burst: 1}, Tool: Limit{Rate: 10, Burst: 10}}, quiet)
		l.known = func(string) bool { return true }
		wait, _ := l.allow("a", "peek", now)
		require.Zero(t, wait)
		for i := range 1000 {
			wait, which := l.allow("a", fmt.Sprintf("tool_%d", i), now)
			require.Positive(t, wait)
			require.Equal(t, "per tenant", which)
		}
		assert.Equal(t, 2, len(l.buckets), "the tenant's bucket and peek's; the refused calls made none")
	})
	t.Run("a new key at the bound costs no scan", func(t *testing.T) {
		const keys = 100_000
		l := newLimiter(RateLimits{Tool: Limit{Rate: rate.Every(time.Hour), Burst: 5}, MaxKeys: keys}, quiet)
		for i := range keys { // none full again: the old eviction scanned them all
			l.allow(fmt.Sprintf("tenant-%d", i), "peek", now)
		}
		start := time.Now()
		for i := range 5_000 {
			l.allow(fmt.Sprintf("new-%d", i), "peek", now)
		}
		took := time.Since(start)
		t.Logf("5,000 new keys at the bound of %d took %v", keys, took)
		assert.Equal(t, keys, len(l.buckets))
		assert.Equal(t, keys, l.lru.Len())
		assert.Less(t, took, 2*time.Second, "each new key forgets one bucket, without a scan")
		_, kept := l.buckets[rateKey{tenant: "tenant-0", tool: "peek"}]
		assert.False(t, kept, "the least recently used went first")
		_, kept = l.buckets[rateKey{tenant: fmt.Sprintf("tenant-%d", keys-1), tool: "peek"}]
		assert.True(t, kept)
	})
}
