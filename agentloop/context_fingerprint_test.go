package agentloop_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// TestContextFingerprint: the hash changes with each part of the policy
// that changes the history, and only with those; no policy hashes to "".
func TestContextFingerprint(t *testing.T) {
	summarize := func(context.Context, []agentloop.Message) (string, error) { return "s", nil }
	other := func(context.Context, []agentloop.Message) (string, error) { return "other", nil }
	base := agentloop.Options{ContextBudget: 100_000, ContextPolicy: agentloop.ContextPolicy{
		Summarize: summarize, SpillBytes: 4096, SpillRoot: "/work/a",
	}}
	with := func(f func(o *agentloop.Options)) agentloop.Options {
		o := base
		f(&o)
		return o
	}
	baseFP := agentloop.ContextFingerprint(base)
	assert.Len(t, baseFP, 64)

	t.Run("none", func(t *testing.T) {
		assert.Empty(t, agentloop.ContextFingerprint(agentloop.Options{}))
		assert.Empty(t, agentloop.ContextFingerprint(agentloop.Options{MaxIterations: 9, ContextPolicy: agentloop.ContextPolicy{KeepSpillFiles: true, SpillRoot: "/x"}}),
			"without a budget and without spilling, the policy does nothing")
	})

	changed := map[string]agentloop.Options{
		"budget":            with(func(o *agentloop.Options) { o.ContextBudget = 50_000 }),
		"clear at":          with(func(o *agentloop.Options) { o.ContextPolicy.ClearAt = 10_000 }),
		"never clear":       with(func(o *agentloop.Options) { o.ContextPolicy.ClearAt = -1 }),
		"keep tool results": with(func(o *agentloop.Options) { o.ContextPolicy.KeepToolResults = 9 }),
		"compact at":        with(func(o *agentloop.Options) { o.ContextPolicy.CompactAt = 70_000 }),
		"keep recent":       with(func(o *agentloop.Options) { o.ContextPolicy.KeepRecent = 5_000 }),
		"no summarizer":     with(func(o *agentloop.Options) { o.ContextPolicy.Summarize = nil }),
		"spill bytes":       with(func(o *agentloop.Options) { o.ContextPolicy.SpillBytes = 8192 }),
		"no spilling":       with(func(o *agentloop.Options) { o.ContextPolicy.SpillBytes, o.ContextPolicy.SpillRoot = 0, "" }),
		"spill dir":         with(func(o *agentloop.Options) { o.ContextPolicy.SpillDir = "tmp/spill" }),
		"spilling only":     with(func(o *agentloop.Options) { o.ContextBudget, o.ContextPolicy.Summarize = 0, nil }),
	}
	seen := map[string]string{baseFP: "base"}
	for name, o := range changed {
		t.Run("changed/"+name, func(t *testing.T) {
			fp := agentloop.ContextFingerprint(o)
			assert.NotEmpty(t, fp)
			assert.NotContains(t, seen, fp, "the same hash as %q", seen[fp])
			seen[fp] = name
		})
	}

	same := map[string]agentloop.Options{
		"defaults spelled out": with(func(o *agentloop.Options) {
			o.ContextPolicy.ClearAt = 100_000 * agentloop.DefaultClearAtPercent / 100
			o.ContextPolicy.CompactAt = 100_000 * agentloop.DefaultCompactAtPercent / 100
			o.ContextPolicy.KeepRecent = 100_000 * agentloop.DefaultKeepRecentPercent / 100
			o.ContextPolicy.KeepToolResults = agentloop.DefaultKeepToolResults
			o.ContextPolicy.SpillDir = agentloop.DefaultSpillDir
		}),
		"another summarizer": with(func(o *agentloop.Options) { o.ContextPolicy.Summarize = other }),
		"another spill root": with(func(o *agentloop.Options) { o.ContextPolicy.SpillRoot = "/elsewhere/b" }),
		"keep spill files":   with(func(o *agentloop.Options) { o.ContextPolicy.KeepSpillFiles = true }),
		"other loop options": with(func(o *agentloop.Options) { o.MaxIterations, o.MaxParallel = 3, 2 }),
	}
	for name, o := range same {
		t.Run("same/"+name, func(t *testing.T) {
			assert.Equal(t, baseFP, agentloop.ContextFingerprint(o))
		})
	}
}

// A durable engine folds the context policy into the fingerprint of a
// run's agent: a run resumed under another policy is refused.
func ExampleContextFingerprint() {
	a := agentloop.Options{ContextBudget: 100_000}
	b := agentloop.Options{ContextBudget: 100_000, ContextPolicy: agentloop.ContextPolicy{ClearAt: 60_000}} // the default, spelled out
	c := agentloop.Options{ContextBudget: 50_000}
	fmt.Println(agentloop.ContextFingerprint(a) == agentloop.ContextFingerprint(b))
	fmt.Println(agentloop.ContextFingerprint(a) == agentloop.ContextFingerprint(c))
	fmt.Printf("%q\n", agentloop.ContextFingerprint(agentloop.Options{}))
	// Output:
	// true
	// false
	// ""
}
