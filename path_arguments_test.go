package llmtoolkit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// pathTool is a tool declaring its "path" argument, with a canonical
// function that tells it was called.
func pathTool(name string) Tool {
	t := MustTool(name, "Reads a path.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	t.Paths = &PathArguments{Names: []string{"path"}, Canonical: func(_ context.Context, _, v string) (string, error) { return "canon:" + v, nil }}
	return t
}

// TestPathFactTravels: the path declaration (Tool.Paths) reaches the
// caller through every wrapper that passes definitions on, listed and
// looked up, like SensitiveFields and Recipe.
func TestPathFactTravels(t *testing.T) {
	read := pathTool("read")
	inner := newStub(nil, read, simpleTool("other"))
	_, session := PrepareSession(inner, []string{"read", "other"}, map[string]any{"k": "v"})
	type lister interface {
		Tools() []Tool
		LookupTool(name string) (Tool, bool)
	}
	for name, r := range map[string]lister{
		"compose":       Compose(inner, newStub(nil, simpleTool("third"))),
		"filter":        Filter(inner, func(Tool) bool { return true }).(lister),
		"session":       session,
		"observed":      NewObservedTools(inner, &countingObserver{}),
		"nested stacks": NewObservedTools(Compose(Filter(session, func(Tool) bool { return true })), &countingObserver{}),
	} {
		t.Run(name, func(t *testing.T) {
			var listed Tool
			for _, tool := range r.Tools() {
				if tool.Name == "read" {
					listed = tool
				}
			}
			require.NotNil(t, listed.Paths, "listed")
			got, err := listed.Paths.Canonical(t.Context(), "path", "a/../b")
			require.NoError(t, err)
			assert.Equal(t, "canon:a/../b", got)
			found, ok := r.LookupTool("read")
			require.True(t, ok)
			assert.Same(t, read.Paths, found.Paths, "looked up")
			assert.True(t, found.Paths.Declares("path"))
			assert.False(t, found.Paths.Declares("content"))
			other, _ := r.LookupTool("other")
			assert.Nil(t, other.Paths)
		})
	}
}

// TestObservedToolsSeeANewPathFact: a definition whose path declaration
// is replaced is a new definition for ObservedTools (as a new schema is).
func TestObservedToolsSeeANewPathFact(t *testing.T) {
	first := pathTool("read")
	inner := &changingResolver{}
	inner.set(first)
	o := NewObservedTools(inner, &countingObserver{})
	o.Tools()
	got, _ := o.LookupTool("read")
	require.Same(t, first.Paths, got.Paths)
	second := first
	second.Paths = &PathArguments{Names: []string{"path", "dest"}, Canonical: first.Paths.Canonical}
	inner.set(second)
	o.Tools()
	got, _ = o.LookupTool("read")
	assert.Same(t, second.Paths, got.Paths, "the new declaration, not the first one")
}

func TestExcludedPathsAddUp(t *testing.T) {
	ctx := context.Background()
	assert.Nil(t, ScopeFrom(ctx).ExcludedPaths)
	ctx = WithScope(ctx, func(sc *Scope) { sc.ExcludedPaths = append(sc.ExcludedPaths, "secrets/**") })
	ctx2 := WithScope(ctx, func(sc *Scope) { sc.ExcludedPaths = append(sc.ExcludedPaths, ".git/**") })
	assert.Equal(t, []string{"secrets/**"}, ScopeFrom(ctx).ExcludedPaths)
	assert.Equal(t, []string{"secrets/**", ".git/**"}, ScopeFrom(ctx2).ExcludedPaths, "a sub-agent's guard adds to its parent's")
	var nilPaths *PathArguments
	assert.False(t, nilPaths.Declares("path"))
}
