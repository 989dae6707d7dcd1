package llmtoolkit

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingObserver counts the calls it is told of.
type countingObserver struct{ n atomic.Int64 }

func (c *countingObserver) ObserveCall(context.Context, Observation) { c.n.Add(1) }

// changingResolver lists whichever tools it was last given, like an MCP
// client after Refresh or a permission guard after a mode switch.
type changingResolver struct {
	mu    sync.Mutex
	tools []Tool
}

func (c *changingResolver) set(tools ...Tool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = tools
}

func (c *changingResolver) Tools() []Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.tools
}

func (c *changingResolver) Resolve(context.Context, Call) (string, error) { return "ok", nil }

func hasObserver(t Tool, ob Observer) bool { return slices.Contains(t.Observers, ob) }

func TestObservedToolsFollowTheWrappedList(t *testing.T) {
	ob := &countingObserver{}
	inner := &changingResolver{}
	read, write := simpleTool("read"), simpleTool("write")
	inner.set(read)
	o := NewObservedTools(inner, ob)

	require.Equal(t, []string{"read"}, toolNamesOf(o.Tools()))
	_, ok := o.LookupTool("write")
	assert.False(t, ok, "not listed yet")

	inner.set(read, write, simpleTool("read")) // a new tool, and a duplicate name
	got := o.Tools()
	require.Equal(t, []string{"read", "write"}, toolNamesOf(got), "the new list, first of each name")
	for _, tool := range got {
		assert.True(t, hasObserver(tool, ob), tool.Name)
	}
	w, ok := o.LookupTool("write")
	require.True(t, ok)
	assert.True(t, hasObserver(w, ob))

	inner.set(write)
	assert.Equal(t, []string{"write"}, toolNamesOf(o.Tools()))
	_, ok = o.LookupTool("read")
	assert.False(t, ok, "a tool the wrapped resolver dropped is gone")
}

func TestObservedToolsSeeAReplacedDefinition(t *testing.T) {
	ob := &countingObserver{}
	old := MustTool("lookup", "Looks up.", map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "string"}}})
	inner := &changingResolver{}
	inner.set(old)
	o := NewObservedTools(inner, ob)
	o.Tools()
	first, ok := o.LookupTool("lookup")
	require.True(t, ok)
	require.Empty(t, first.SensitiveFields)

	replaced := MustTool("lookup", "Looks up.", map[string]any{"type": "object", "properties": map[string]any{"id": map[string]any{"type": "integer"}}})
	replaced.SensitiveFields = []string{"id"}
	inner.set(replaced)
	o.Tools() // as agentloop does every iteration
	got, ok := o.LookupTool("lookup")
	require.True(t, ok)
	assert.Equal(t, []string{"id"}, got.SensitiveFields, "the new definition's facts, not the first one's")
	assert.Error(t, got.ValidateArguments(map[string]any{"id": "x"}), "validated against the new schema")
	assert.True(t, hasObserver(got, ob))
	assert.Len(t, got.Observers, 1, "the observer is added once")
}

func TestObservedToolsAllocateNothingWhenUnchanged(t *testing.T) {
	ob := &countingObserver{}
	r := Compose(newStub(nil, simpleTool("a"), simpleTool("b")), newStub(nil, simpleTool("c")))
	o := NewObservedTools(r, ob)
	o.Tools()
	o.LookupTool("c")
	allocs := testing.AllocsPerRun(100, func() {
		o.Tools()
		if _, ok := o.LookupTool("c"); !ok {
			t.Fatal("c not found")
		}
	})
	assert.Zero(t, allocs)
	first, _ := o.LookupTool("b")
	again, _ := o.LookupTool("b")
	assert.True(t, &first.Observers[0] == &again.Observers[0], "the observed copy is reused")
}

// freshListResolver builds its list anew on every call, as a permission
// guard does.
type freshListResolver struct{ tools []Tool }

func (f freshListResolver) Tools() []Tool                                 { return slices.Clone(f.tools) }
func (f freshListResolver) Resolve(context.Context, Call) (string, error) { return "ok", nil }

func TestObservedToolsReuseAFreshListOfTheSameTools(t *testing.T) {
	o := NewObservedTools(freshListResolver{tools: []Tool{simpleTool("a"), simpleTool("b"), simpleTool("c")}}, &countingObserver{})
	first := o.Tools()
	allocs := testing.AllocsPerRun(100, func() {
		if got := o.Tools(); &got[0] != &first[0] {
			t.Fatal("the observed list was made again")
		}
	})
	assert.LessOrEqual(t, allocs, 1.0, "only the wrapped resolver's own copy of its list")
}

func TestObservedToolsConcurrent(t *testing.T) {
	ob := &countingObserver{}
	inner := &changingResolver{}
	a, b := simpleTool("a"), simpleTool("b")
	inner.set(a)
	o := NewObservedTools(inner, ob)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range 200 {
				if i == 0 && j%10 == 0 {
					if j%20 == 0 {
						inner.set(a, b)
					} else {
						inner.set(a)
					}
				}
				for _, tool := range o.Tools() {
					assert.True(t, hasObserver(tool, ob))
				}
				if tool, ok := o.LookupTool("a"); assert.True(t, ok) {
					assert.True(t, hasObserver(tool, ob))
				}
			}
		}()
	}
	wg.Wait()
}

func TestObservedToolsNilResolver(t *testing.T) {
	o := NewObservedTools(nil, &countingObserver{})
	assert.Empty(t, o.Tools())
	_, ok := o.LookupTool("x")
	assert.False(t, ok)
}

func TestFindTool(t *testing.T) {
	stub := newStub(nil, simpleTool("a"), simpleTool("b"))
	tests := []struct {
		name string
		r    Resolver
		tool string
		want bool
	}{
		{"listed, no lookup", stub, "b", true},
		{"missing", stub, "z", false},
		{"through Compose's lookup", Compose(stub), "a", true},
		{"nil resolver", nil, "a", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := FindTool(tt.r, tt.tool)
			assert.Equal(t, tt.want, ok)
			if tt.want {
				assert.Equal(t, tt.tool, got.Name)
			}
		})
	}
}

func TestCatchDefinition(t *testing.T) {
	ctx, caught := CatchDefinition(context.Background(), "step")
	_, ok := caught()
	assert.False(t, ok, "nothing told yet")
	TellDefinition(ctx, simpleTool("other"))
	_, ok = caught()
	assert.False(t, ok, "another tool's definition is not kept")
	step := simpleTool("step")
	step.SensitiveFields = []string{"pin"}
	TellDefinition(ctx, step)
	got, ok := caught()
	require.True(t, ok)
	assert.Equal(t, []string{"pin"}, got.SensitiveFields)
}
