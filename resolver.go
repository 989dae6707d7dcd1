package llmtoolkit

import (
	"context"
	"errors"
	"sync"
)

// Resolver maps a tool call to its execution. Tools lists the tools it
// offers; Resolve runs one call and returns the content for the model.
//
// Resolve returns an error wrapping [ErrUnknownTool] for a name it does not
// know, so that [Compose] can pass the call on. Hosts usually call
// [Execute] rather than Resolve, to get validation, panic safety and a
// [Result] the model can act on.
type Resolver interface {
	Tools() []Tool
	Resolve(ctx context.Context, call Call) (string, error)
}

// ResolverFunc adapts a function to [Resolver]. It lists no tools, so
// [Execute] cannot validate arguments against a schema for it; pair it with
// the tool list it serves (as [PrepareSession] returns) where that matters.
type ResolverFunc func(ctx context.Context, call Call) (string, error)

// Tools returns nil: a function does not describe its tools.
func (f ResolverFunc) Tools() []Tool { return nil }

// Resolve calls f.
func (f ResolverFunc) Resolve(ctx context.Context, call Call) (string, error) { return f(ctx, call) }

// ErrUnknownTool reports a call for a tool the resolver does not have. It is
// wrapped with the name: "unknown tool: NAME".
var ErrUnknownTool = errors.New("unknown tool")

// ToolLookup is an optional capability of a [Resolver]: finding one tool by
// name without building the whole list. [Execute] uses it when present. It
// is only a shortcut: it must find exactly what Tools lists, so a wrapper
// that does not forward it loses speed, never a guarantee.
type ToolLookup interface {
	LookupTool(name string) (Tool, bool)
}

// FindTool finds name among r's tools: through its [ToolLookup] when it has
// one, else in its list. A nil r has no tools.
func FindTool(r Resolver, name string) (Tool, bool) {
	if r == nil {
		return Tool{}, false
	}
	if l, ok := r.(ToolLookup); ok {
		return l.LookupTool(name)
	}
	for _, t := range r.Tools() {
		if t.Name == name {
			return t, true
		}
	}
	return Tool{}, false
}

// ErrHalt is wrapped by the error [Halt] returns: a tool asks the agent loop
// to stop now.
var ErrHalt = errors.New("halt")

// HaltError is the error [Halt] returns. It wraps [ErrHalt].
type HaltError struct {
	// Reason says why the tool asked to stop.
	Reason string
}

// Error returns "halt: REASON".
func (e *HaltError) Error() string { return "halt: " + e.Reason }

// Unwrap returns [ErrHalt].
func (e *HaltError) Unwrap() error { return ErrHalt }

// Halt returns an error wrapping [ErrHalt]: a tool returns it to ask the
// agent loop to stop at once, for the given reason.
func Halt(reason string) error { return &HaltError{Reason: reason} }

type displayKey struct{}

// displaySlot collects what a tool shows during one execution, and holds
// the call being executed ([CallFrom]).
type displaySlot struct {
	mu      sync.Mutex
	display *Display
	notify  *showListener
	call    Call
}

// CallFrom returns the call [Execute] is running with ctx, as Execute
// received it, and whether there is one: what a tool that is not handed
// its [Call] (an agentresolver.Func handler) needs to compute its
// [IdempotencyKey]. Inside a nested Execute it is that Execute's call. A
// guard that allows a call with changed arguments changes what the tool
// receives, not what CallFrom returns; the ID and name are the same.
func CallFrom(ctx context.Context) (Call, bool) {
	if slot, ok := ctx.Value(displayKey{}).(*displaySlot); ok && slot != nil {
		return slot.call, true
	}
	return Call{}, false
}

// ShownDisplay returns the Display the call [Execute] is running with ctx
// has shown so far ([Show]; the last one), and whether there is one: for a
// wrapper below Execute that reports on the call when it ends (otelkit
// adds a background job's facts to the call's span), since the Display
// reaches only Execute's [Result].
func ShownDisplay(ctx context.Context) (Display, bool) {
	if slot, ok := ctx.Value(displayKey{}).(*displaySlot); ok && slot != nil {
		slot.mu.Lock()
		defer slot.mu.Unlock()
		if slot.display != nil {
			return *slot.display, true
		}
	}
	return Display{}, false
}

// Show attaches a structured payload for hosts to the running tool call, the
// way grpc.SetHeader attaches a header: [Execute] puts it on
// [Result.Display]. The last call wins. Outside [Execute] it does nothing
// but notify the Show listener of ctx ([Listeners]).
func Show(ctx context.Context, d Display) {
	if slot, ok := ctx.Value(displayKey{}).(*displaySlot); ok && slot != nil {
		slot.mu.Lock()
		dd := d
		slot.display = &dd
		notify := slot.notify
		slot.mu.Unlock()
		if notify != nil {
			notify.fn(d)
		}
		// A listener installed beneath the Execute, by a wrapper between it
		// and the tool (trace.Recorder reads a sub-agent's cost so), is
		// told too.
		if l, _ := ctx.Value(showFuncKey{}).(*showListener); l != nil && l != notify {
			l.fn(d)
		}
		return
	}
	if l, _ := ctx.Value(showFuncKey{}).(*showListener); l != nil {
		l.fn(d)
	}
}

type showFuncKey struct{}

// showListener is a Show listener, by pointer so that Show tells a
// listener installed beneath an Execute from the one Execute was given.
type showListener struct{ fn func(Display) }

// Indexed returns r itself when it implements [ToolLookup], or r with a
// name index over tools (the list r gave when the caller read it), so that
// [Execute] and [FindTool] find a definition with one map lookup instead of
// scanning the list on every call. The first of two tools with one name
// wins, as in [Compose]. Definitions, with their per-tool facts, are passed
// through unchanged; calls go to r. Servers that fix their tool list when
// built (package mcp's, an adapter's) use it.
func Indexed(r Resolver, tools []Tool) Resolver {
	if _, ok := r.(ToolLookup); ok {
		return r
	}
	ix := &indexed{r: r, tools: tools, byName: make(map[string]int, len(tools))}
	for i, t := range tools {
		if _, dup := ix.byName[t.Name]; !dup {
			ix.byName[t.Name] = i
		}
	}
	return ix
}

// indexed is a Resolver with a name index over a fixed list: see [Indexed].
type indexed struct {
	r      Resolver
	tools  []Tool
	byName map[string]int
}

func (ix *indexed) Tools() []Tool { return ix.tools }

func (ix *indexed) LookupTool(name string) (Tool, bool) {
	i, ok := ix.byName[name]
	if !ok {
		return Tool{}, false
	}
	return ix.tools[i], true
}

func (ix *indexed) Resolve(ctx context.Context, call Call) (string, error) {
	return ix.r.Resolve(ctx, call)
}
