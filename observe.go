package llmtoolkit

import (
	"context"
	"runtime/debug"
	"time"
)

// Observer is told of the calls of a tool that [Execute] answers itself,
// without passing them to a [Resolver] (see [Tool.Observers]). A wrapper
// that must see every call of the tools it lists, such as an audit trail,
// adds itself to their definitions: definitions travel through every
// wrapper, so the observer is reached whatever wraps it.
type Observer interface {
	// ObserveCall is called once per such call, after it was answered, from
	// the goroutine that ran it. It must not block for long. A panic in it
	// is logged and otherwise ignored.
	ObserveCall(ctx context.Context, o Observation)
}

// ObservationKind says why [Execute] answered a call itself.
type ObservationKind string

// The kinds of [Observation].
const (
	// ObservedRefused: the call was refused before any resolver saw it
	// (invalid arguments, a context already done, a panic while validating).
	ObservedRefused ObservationKind = "refused"
	// ObservedRecipe: the call ran as a recipe; its steps were resolved
	// (and observed) on their own, each carrying [RecipeRunFrom].
	ObservedRecipe ObservationKind = "recipe"
)

// Observation describes one call answered by [Execute] itself.
type Observation struct {
	// Kind says why Execute answered the call itself.
	Kind ObservationKind
	// Call is the call as Execute received it.
	Call Call
	// Tool is the definition the call was checked against.
	Tool Tool
	// Result is what Execute returned for it.
	Result Result
	// Duration is how long Execute took over it.
	Duration time.Duration
	// RunID, for a recipe call, is the [RecipeRun.ID] its steps carried.
	RunID string
}

// TellObservers tells each of o.Tool's [Tool.Observers] of o, rescuing
// and logging their panics. [Execute] calls it for the calls it answers
// without Resolve (refused, or a recipe's own row); a wrapper that refuses
// or answers a call itself, such as a permission guard, calls it so that
// the tool's observers (a trace, a span) still see the call.
func TellObservers(ctx context.Context, o Observation) {
	for _, ob := range o.Tool.Observers {
		if ob == nil {
			continue
		}
		func() {
			defer func() {
				if v := recover(); v != nil {
					logPanic(ctx, "observer", o.Tool, o.Call, &PanicError{Value: v, Stack: debug.Stack()})
				}
			}()
			ob.ObserveCall(ctx, o)
		}()
	}
}
