package codetools

import (
	"errors"
	"log/slog"
	"runtime/debug"

	"github.com/llmtoolkit/llmtoolkit"
)

// errGoexit is reported for a guarded goroutine that ended through
// runtime.Goexit, without returning or panicking.
var errGoexit = errors.New("goroutine exited without returning")

// goGuarded runs fn in a new goroutine and returns a channel that receives
// fn's error (nil included) exactly once and is then closed. A panic in fn
// does not kill the process: it is recovered, logged through log/slog with
// its stack (as [llmtoolkit.Execute] logs a tool's panic), and sent as a
// *[llmtoolkit.PanicError], which wraps [llmtoolkit.ErrToolPanic], so the
// call that started the goroutine returns it as its error. what names the
// goroutine in the log ("walk", "bash output", ...).
//
// Every goroutine a tool starts runs through goGuarded: Execute's own guard
// only covers the goroutine that calls the tool.
func goGuarded(what string, fn func() error) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer close(done)
		returned := false
		defer func() {
			if returned {
				return
			}
			v := recover()
			if v == nil { // runtime.Goexit: report it rather than nothing
				done <- errGoexit
				return
			}
			pe := &llmtoolkit.PanicError{Value: v, Stack: debug.Stack()}
			slog.Error("codetools: goroutine panicked",
				slog.String("goroutine", what), slog.Any("panic", v), slog.String("stack", string(pe.Stack)))
			done <- pe
		}()
		err := fn()
		returned = true
		done <- err
	}()
	return done
}
