package llmtoolkittest

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/llmtoolkit/llmtoolkit"
)

// HandlerFunc computes a fake tool's answer from the call.
type HandlerFunc func(ctx context.Context, call llmtoolkit.Call) (string, error)

// Fake is a [llmtoolkit.Resolver] whose tools answer with canned outputs,
// canned errors or functions, and which records every call it receives. It
// is safe for concurrent use. The zero value has no tools; add them with
// [Fake.Returns], [Fake.Fails], [Fake.Handle] or [Fake.Add].
type Fake struct {
	mu       sync.Mutex
	tools    []llmtoolkit.Tool
	handlers map[string]HandlerFunc
	calls    []llmtoolkit.Call
}

// NewFake returns a Fake whose tools return the given canned outputs, keyed
// by tool name (listed in name order). Each tool accepts any arguments.
func NewFake(outputs map[string]string) *Fake {
	f := &Fake{}
	names := make([]string, 0, len(outputs))
	for name := range outputs {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		f.Returns(name, outputs[name])
	}
	return f
}

// Returns adds (or replaces) a tool that answers output.
func (f *Fake) Returns(name, output string) *Fake {
	return f.Handle(name, func(context.Context, llmtoolkit.Call) (string, error) { return output, nil })
}

// Fails adds (or replaces) a tool that answers err.
func (f *Fake) Fails(name string, err error) *Fake {
	return f.Handle(name, func(context.Context, llmtoolkit.Call) (string, error) { return "", err })
}

// Handle adds (or replaces) a tool that answers with fn. The tool accepts
// any arguments; use [Fake.Add] to give it a schema.
func (f *Fake) Handle(name string, fn HandlerFunc) *Fake {
	tool := llmtoolkit.MustTool(name, "Fake tool "+name+" for tests.", map[string]any{
		"type": "object", "properties": map[string]any{},
	})
	return f.Add(tool, fn)
}

// Add adds (or replaces) a tool with its own definition, so that
// [llmtoolkit.Execute] validates arguments against its schema.
func (f *Fake) Add(tool llmtoolkit.Tool, fn HandlerFunc) *Fake {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.handlers == nil {
		f.handlers = map[string]HandlerFunc{}
	}
	if _, exists := f.handlers[tool.Name]; exists {
		i := slices.IndexFunc(f.tools, func(t llmtoolkit.Tool) bool { return t.Name == tool.Name })
		f.tools[i] = tool
	} else {
		f.tools = append(f.tools, tool)
	}
	f.handlers[tool.Name] = fn
	return f
}

// Tools lists the fake tools in the order they were added.
func (f *Fake) Tools() []llmtoolkit.Tool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tools)
}

// Resolve records the call and answers it. An unknown name is recorded too
// and answered with an error wrapping [llmtoolkit.ErrUnknownTool].
func (f *Fake) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	f.mu.Lock()
	f.calls = append(f.calls, call)
	fn := f.handlers[call.Name]
	f.mu.Unlock()
	if fn == nil {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	return fn(ctx, call)
}

// Calls returns a copy of every call received, in order of arrival.
func (f *Fake) Calls() []llmtoolkit.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// CallsTo returns the calls received for one tool, in order of arrival.
func (f *Fake) CallsTo(name string) []llmtoolkit.Call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []llmtoolkit.Call
	for _, c := range f.calls {
		if c.Name == name {
			out = append(out, c)
		}
	}
	return out
}

// Reset forgets the recorded calls.
func (f *Fake) Reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}
