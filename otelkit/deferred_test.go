package otelkit_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// TestInstrumentKeepsDeferred: the definitions an instrumented resolver
// lists and looks up keep their deferral, as every per-tool fact.
func TestInstrumentKeepsDeferred(t *testing.T) {
	tel := newTelemetry(t)
	lazy := llmtoolkit.MustTool("lazy", "Loaded on demand.", textSchema)
	lazy.Deferred = true
	plain := llmtoolkit.MustTool("plain", "Always listed.", textSchema)
	ok := func(context.Context, llmtoolkit.Call) (string, error) { return "ok", nil }
	r := otelkit.Instrument((&lt.Fake{}).Add(lazy, ok).Add(plain, ok), tel.opts()...)
	listed := map[string]bool{}
	for _, tool := range r.Tools() {
		listed[tool.Name] = tool.Deferred
	}
	assert.Equal(t, map[string]bool{"lazy": true, "plain": false}, listed)
	got, found := llmtoolkit.FindTool(r, "lazy")
	require.True(t, found)
	assert.True(t, got.Deferred)
}
