package codetools

import (
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// errGoexit is reported for a guarded goroutine that ended through
// runtime.Goexit, without returning or panicking.
var errGoexit = guard.ErrGoexit

// toolPanic is how codetools reports a panic recovered by internal/guard:
// a *[llmtoolkit.PanicError], which wraps [llmtoolkit.ErrToolPanic], as
// [llmtoolkit.Execute] reports a tool's own panic.
func toolPanic(value any, stack []byte) error {
	return &llmtoolkit.PanicError{Value: value, Stack: stack}
}

// goGuarded runs fn in a new goroutine and returns a channel that receives
// fn's error (nil included) exactly once and is then closed (see
// guard.Go). A panic in fn does not kill the process: it is recovered,
// logged through log/slog with its stack, and sent as a
// *[llmtoolkit.PanicError], so the call that started the goroutine returns
// it as its error. what names the goroutine in the log ("walk", "bash
// output", ...).
//
// Every goroutine a tool starts runs through internal/guard: Execute's own
// guard only covers the goroutine that calls the tool.
func goGuarded(what string, fn func() error) <-chan error {
	return guard.Go(what, fn, toolPanic)
}
