package llmtoolkit

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIndexed: a resolver without LookupTool gets a name index over the
// list it gave (the first of two tools of one name wins, as in Compose),
// and calls still go to it; one that can look tools up is returned as is.
func TestIndexed(t *testing.T) {
	first := simpleTool("a")
	first.Description = "the first a"
	second := simpleTool("a")
	second.Description = "the second a"
	stub := newStub(map[string]func(context.Context, Call) (string, error){"a": answer("from a")}, first, second, simpleTool("b"))

	r := Indexed(stub, stub.Tools())
	lookup, ok := r.(ToolLookup)
	require.True(t, ok, "the indexed resolver looks tools up")
	got, ok := lookup.LookupTool("a")
	require.True(t, ok)
	assert.Equal(t, "the first a", got.Description)
	_, ok = lookup.LookupTool("missing")
	assert.False(t, ok)
	assert.Equal(t, []string{"a", "a", "b"}, toolNamesOf(r.Tools()))

	res := Execute(context.Background(), r, Call{ID: "1", Name: "a", Arguments: map[string]any{}})
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "from a", res.Content)

	composed := Compose(stub)
	assert.Same(t, composed, Indexed(composed, composed.Tools()), "a resolver that looks tools up is kept")
}
