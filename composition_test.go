package llmtoolkit

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func toolNamesOf(tools []Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.Name
	}
	return out
}

func TestCompose(t *testing.T) {
	first := newStub(map[string]func(context.Context, Call) (string, error){
		"shared": answer("first"),
		"only1":  answer("only1"),
		"passes": func(context.Context, Call) (string, error) { return "", fmt.Errorf("%w: passes", ErrUnknownTool) },
		"fails":  func(context.Context, Call) (string, error) { return "", errors.New("real failure") },
	}, MustTool("shared", "First's shared.", nil), simpleTool("only1"), simpleTool("passes"), simpleTool("fails"))
	second := newStub(map[string]func(context.Context, Call) (string, error){
		"shared":   answer("second"),
		"passes":   answer("second took it"),
		"fails":    answer("never"),
		"unlisted": answer("second resolves unlisted"),
	}, MustTool("shared", "Second's shared.", nil), simpleTool("only2"), simpleTool("passes"), simpleTool("fails"))

	c := Compose(first, nil, second)
	assert.Equal(t, []string{"shared", "only1", "passes", "fails", "only2"}, toolNamesOf(c.Tools()), "each name once, resolver order")
	shared, ok := c.LookupTool("shared")
	require.True(t, ok)
	assert.Equal(t, "First's shared.", shared.Description, "first definition wins")

	tests := []struct {
		name, want, wantErr string
	}{
		{name: "shared", want: "first"},
		{name: "only1", want: "only1"},
		{name: "passes", want: "second took it"},
		{name: "fails", wantErr: "real failure"},
		{name: "unlisted", want: "second resolves unlisted"},
		{name: "only2", wantErr: "unknown tool: only2"}, // listed but second's stub has no function
		{name: "nobody", wantErr: "unknown tool: nobody"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := c.Resolve(context.Background(), Call{Name: tt.name})
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, out)
		})
	}
	_, err := c.Resolve(context.Background(), Call{Name: "nobody"})
	assert.ErrorIs(t, err, ErrUnknownTool)
}

func TestComposeNested(t *testing.T) {
	a := newStub(map[string]func(context.Context, Call) (string, error){"a": answer("A")}, simpleTool("a"))
	b := newStub(map[string]func(context.Context, Call) (string, error){"b": answer("B"), "a": answer("shadowed")}, simpleTool("b"), simpleTool("a"))
	c := newStub(map[string]func(context.Context, Call) (string, error){"c": answer("C")}, simpleTool("c"))
	outer := Compose(Compose(a, b), c)
	assert.Equal(t, []string{"a", "b", "c"}, toolNamesOf(outer.Tools()))
	for name, want := range map[string]string{"a": "A", "b": "B", "c": "C"} {
		res := Execute(context.Background(), outer, Call{Name: name})
		assert.Equal(t, want, res.Content)
	}
	res := Execute(context.Background(), outer, Call{Name: "zzz"})
	assert.Equal(t, `unknown tool: "zzz". Available tools: a, b, c`, res.Content)
}

func TestComposeCarriesRecipes(t *testing.T) {
	plain := newStub(map[string]func(context.Context, Call) (string, error){"x": answer("x")}, simpleTool("x"))
	recipe := func(map[string]any) Plan { return Plan{Serial: []Call{{Name: "x"}, {Name: "x"}}} }
	with := withRecipes(newStub(nil, simpleTool("twice")), map[string]Recipe{"twice": recipe})
	c := Compose(plain, with)
	x, _ := c.LookupTool("x")
	assert.Nil(t, x.Recipe)
	twice, ok := c.LookupTool("twice")
	require.True(t, ok)
	require.NotNil(t, twice.Recipe, "the definition carries the recipe")
	for _, r := range []Resolver{c, Compose(c), Compose(Compose(nil, c))} {
		res := Execute(context.Background(), r, Call{Name: "twice"})
		assert.Equal(t, "x\n\nx", res.Content, "nested compositions pass recipes on")
	}
}

// BenchmarkComposeResolve measures what Compose adds to a call: 100
// resolvers of 10 tools each, calling a tool of the last resolver.
func BenchmarkComposeResolve(b *testing.B) {
	resolvers := make([]Resolver, 100)
	var last *stubResolver
	for i := range resolvers {
		fns := map[string]func(context.Context, Call) (string, error){}
		var tools []Tool
		for j := range 10 {
			name := fmt.Sprintf("tool_%d_%d", i, j)
			fns[name] = answer("ok")
			tools = append(tools, MustTool(name, "d", nil))
		}
		last = newStub(fns, tools...)
		resolvers[i] = last
	}
	c := Compose(resolvers...)
	call := Call{Name: "tool_99_9", Arguments: map[string]any{}}
	ctx := context.Background()
	b.Run("direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := last.Resolve(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("composed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := c.Resolve(ctx, call); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestComposeResolveAllocatesNothing(t *testing.T) {
	r := newStub(map[string]func(context.Context, Call) (string, error){"a": answer("ok")}, simpleTool("a"))
	c := Compose(newStub(nil, simpleTool("z")), r)
	call := Call{Name: "a", Arguments: map[string]any{}}
	allocs := testing.AllocsPerRun(100, func() { _, _ = c.Resolve(context.Background(), call) })
	assert.Zero(t, allocs)
}
