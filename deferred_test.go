package llmtoolkit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestDeferMarksEveryTool: Defer marks each listed and looked-up
// definition deferred, keeps its other facts, follows a changing list and
// passes calls on; SplitDeferred splits a list by the fact.
func TestDeferMarksEveryTool(t *testing.T) {
	a, b := simpleTool("a"), simpleTool("b")
	a.SensitiveFields = []string{"token"}
	stub := newStub(map[string]func(context.Context, Call) (string, error){"a": answer("A")}, a, b)
	d := Defer(stub)
	for _, tool := range d.Tools() {
		assert.True(t, tool.Deferred, tool.Name)
	}
	got, ok := FindTool(d, "a")
	require.True(t, ok)
	assert.True(t, got.Deferred)
	assert.Equal(t, []string{"token"}, got.SensitiveFields)
	assert.False(t, stub.tools[0].Deferred, "the wrapped definitions are not changed")
	stub.tools = append(stub.tools, simpleTool("c"))
	assert.Len(t, d.Tools(), 3)
	res := Execute(t.Context(), d, Call{Name: "a"})
	assert.Equal(t, "A", res.Content)
	assert.Nil(t, Defer(nil))

	offered, deferred := SplitDeferred([]Tool{b, got})
	assert.Equal(t, []string{"b"}, []string{offered[0].Name})
	assert.Equal(t, []string{"a"}, []string{deferred[0].Name})
}

// TestObservedToolsFollowDeferred: a definition whose only change is its
// deferral is a new definition for ObservedTools (trace.Recorder,
// otelkit): the observed copy carries the new value.
func TestObservedToolsFollowDeferred(t *testing.T) {
	a := simpleTool("a")
	stub := newStub(nil, a)
	o := NewObservedTools(stub, nil)
	require.False(t, o.Tools()[0].Deferred)
	a.Deferred = true
	stub.tools = []Tool{a}
	assert.True(t, o.Tools()[0].Deferred)
	got, ok := o.LookupTool("a")
	require.True(t, ok)
	assert.True(t, got.Deferred)
}
