package llmtoolkit

import (
	"context"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"sync/atomic"
)

// stubResolver serves fixed tools with a function per name, counting calls.
type stubResolver struct {
	tools []Tool
	fns   map[string]func(ctx context.Context, call Call) (string, error)
	calls atomic.Int64
}

func newStub(fns map[string]func(ctx context.Context, call Call) (string, error), tools ...Tool) *stubResolver {
	return &stubResolver{tools: tools, fns: fns}
}

func (s *stubResolver) Tools() []Tool { return s.tools }

func (s *stubResolver) Resolve(ctx context.Context, call Call) (string, error) {
	s.calls.Add(1)
	fn, ok := s.fns[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %s", ErrUnknownTool, call.Name)
	}
	return fn(ctx, call)
}

func simpleTool(name string) Tool {
	return MustTool(name, "Tool "+name+".", nil)
}

func answer(s string) func(context.Context, Call) (string, error) {
	return func(context.Context, Call) (string, error) { return s, nil }
}

func runtimeGOMAXPROCS() int { return runtime.GOMAXPROCS(0) }

// withRecipes returns a stub serving s's functions whose tools named in
// recipes carry them (a tool is added for a name s does not list).
func withRecipes(s *stubResolver, recipes map[string]Recipe) *stubResolver {
	out := &stubResolver{fns: s.fns}
	listed := map[string]bool{}
	for _, t := range s.tools {
		if rc, ok := recipes[t.Name]; ok {
			t.Recipe = rc
		}
		listed[t.Name] = true
		out.tools = append(out.tools, t)
	}
	for _, name := range slices.Sorted(maps.Keys(recipes)) {
		if !listed[name] {
			t := simpleTool(name)
			t.Recipe = recipes[name]
			out.tools = append(out.tools, t)
		}
	}
	return out
}
