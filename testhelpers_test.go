package llmtoolkit

import (
	"context"
	"fmt"
	"runtime"
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
