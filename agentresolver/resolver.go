package agentresolver

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"slices"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// Resolver is a [llmtoolkit.Resolver] over a fixed set of handlers, built
// with [New]. It also implements [llmtoolkit.ToolLookup]. It is safe for
// concurrent use; it holds no mutable state of its own (stateful handlers
// guard their own).
type Resolver struct {
	tools   []llmtoolkit.Tool
	entries map[string]*entry
}

// entry is one tool of a Resolver.
type entry struct {
	handler    Handler
	tool       llmtoolkit.Tool
	validating bool // the handler checks its own arguments (Func)
}

// New returns a Resolver over handlers, listing their tools in the order
// given. It refuses a nil handler, an invalid definition (a [Func] whose
// argument type has no schema, a bad name or description, a schema that
// does not compile), two handlers with the same tool name and a sensitive
// field that no argument of the tool can match; the error names the handler
// (position, type and tool name) and the problem.
//
// Each tool's sensitive fields (those of its definition, of the handler's
// SensitiveFields method and of [WithSensitiveFields]) are set on its
// definition, [llmtoolkit.Tool.SensitiveFields], which every wrapper passes
// on to the trace recorder.
func New(handlers ...Handler) (*Resolver, error) {
	r := &Resolver{tools: make([]llmtoolkit.Tool, 0, len(handlers)), entries: make(map[string]*entry, len(handlers))}
	positions := make(map[string]int, len(handlers))
	for i, h := range handlers {
		if h == nil {
			return nil, fmt.Errorf("agentresolver: handler %d: %w", i+1, errNilHandler)
		}
		if err := buildErrorOf(h); err != nil {
			return nil, fmt.Errorf("agentresolver: handler %d (%T): %w", i+1, h, err)
		}
		tool, err := llmtoolkit.NewToolFrom(h.Definition())
		if err != nil {
			return nil, fmt.Errorf("agentresolver: handler %d (%T): %w", i+1, h, err)
		}
		if j, dup := positions[tool.Name]; dup {
			return nil, fmt.Errorf("agentresolver: handler %d (%T): tool name %q is already used by handler %d; tool names must be unique", i+1, h, tool.Name, j+1)
		}
		positions[tool.Name] = i
		var fromHandler []string
		if s, ok := h.(Sensitive); ok {
			fromHandler = s.SensitiveFields()
		}
		tool.SensitiveFields = mergeNames(tool.SensitiveFields, fromHandler)
		for _, name := range tool.SensitiveFields {
			if err := checkSensitive(tool.Parameters, name); err != nil {
				return nil, fmt.Errorf("agentresolver: handler %d (%T): tool %q: %w", i+1, h, tool.Name, err)
			}
		}
		e := &entry{handler: h, tool: tool, validating: isValidating(h)}
		r.entries[tool.Name] = e
		r.tools = append(r.tools, tool)
	}
	return r, nil
}

// Tools lists the tools in the order the handlers were given. The slice is
// shared: do not modify it.
func (r *Resolver) Tools() []llmtoolkit.Tool { return r.tools }

// LookupTool returns the definition of the tool called name.
func (r *Resolver) LookupTool(name string) (llmtoolkit.Tool, bool) {
	e, ok := r.entries[name]
	if !ok {
		return llmtoolkit.Tool{}, false
	}
	return e.tool, true
}

// Resolve runs call: it checks the arguments against the tool's schema
// (an *llmtoolkit.ArgumentsError naming each bad argument; the handler is
// not called), then runs the handler with ctx, which carries the session if
// one was bound ([llmtoolkit.Scope].Session). A handler that panics is
// rescued: the panic and its stack are logged through log/slog and the
// error is an *llmtoolkit.PanicError ("tool execution failed: VALUE",
// wrapping [llmtoolkit.ErrToolPanic]). An unknown name is an error wrapping
// [llmtoolkit.ErrUnknownTool], so that [llmtoolkit.Compose] passes the call
// on.
func (r *Resolver) Resolve(ctx context.Context, call llmtoolkit.Call) (string, error) {
	e, ok := r.entries[call.Name]
	if !ok {
		return "", fmt.Errorf("%w: %s", llmtoolkit.ErrUnknownTool, call.Name)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	args := call.Arguments
	if args == nil {
		args = map[string]any{}
	}
	if !e.validating {
		if err := e.tool.ValidateArguments(args); err != nil {
			return "", err
		}
	}
	return e.run(ctx, args)
}

// ResolveWith is [Resolver.Resolve] with session bound in ctx, for hosts
// that do not use [llmtoolkit.PrepareSession].
func (r *Resolver) ResolveWith(ctx context.Context, call llmtoolkit.Call, session map[string]any) (string, error) {
	return r.Resolve(llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.Session = session }), call)
}

// run calls the handler and turns a panic into an *llmtoolkit.PanicError,
// logged with the values of the tool's sensitive fields scrubbed from the
// panic value (internal/redact, as llmtoolkit.Execute logs a panic).
func (e *entry) run(ctx context.Context, args map[string]any) (out string, err error) {
	defer func() {
		if v := recover(); v != nil {
			pe := &llmtoolkit.PanicError{Value: v, Stack: debug.Stack()}
			secrets := redact.NewFields(e.tool.SensitiveFields).Secrets(args, "")
			slog.ErrorContext(ctx, "agentresolver: tool panicked",
				slog.String("tool", e.tool.Name), slog.String("panic", redact.Scrub(fmt.Sprint(v), secrets, "[REDACTED]")),
				slog.String("stack", string(pe.Stack)))
			out, err = "", pe
		}
	}()
	return e.handler.Execute(ctx, args)
}

// mergeNames returns a's names then b's that a lacks, in order.
func mergeNames(a, b []string) []string {
	out := slices.Clone(a)
	for _, n := range b {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
