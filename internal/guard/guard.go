package guard

import (
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
)

// ErrGoexit is reported for a guarded goroutine that ended through
// runtime.Goexit, without returning or panicking.
var ErrGoexit = errors.New("goroutine exited without returning")

// Wrap makes the error a recovered panic is reported as, from the value
// the goroutine panicked with and its stack.
type Wrap func(value any, stack []byte) error

// Error is the error [Recovered] returns when wrap is nil.
type Error struct {
	Value any    // what the goroutine panicked with
	Stack []byte // its stack at the panic
}

// Error returns "panic: VALUE".
func (e *Error) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Recovered logs the panic value v, recovered in a goroutine named what,
// with the stack of the calling goroutine, and returns the error wrap
// makes of it (an *[Error] when wrap is nil). Call it from the deferred
// function that recovered v, so that the stack still holds the frames
// that panicked.
func Recovered(what string, v any, wrap Wrap) error {
	stack := debug.Stack()
	slog.Error("goroutine panicked",
		slog.String("goroutine", what), slog.Any("panic", v), slog.String("stack", string(stack)))
	if wrap == nil {
		return &Error{Value: v, Stack: stack}
	}
	return wrap(v, stack)
}

// Recover, deferred directly (defer guard.Recover(...)), recovers a panic
// of the goroutine, logs it with its stack and hands report the error wrap
// makes of it. Without a panic it does nothing.
func Recover(what string, wrap Wrap, report func(error)) {
	v := recover()
	if v == nil {
		return
	}
	err := Recovered(what, v, wrap)
	if report != nil {
		report(err)
	}
}

// Go runs fn in a new goroutine and returns a channel that receives fn's
// error (nil included) exactly once and is then closed. A panic in fn does
// not kill the process: it is recovered, logged with its stack and sent as
// the error wrap makes of it. A goroutine that ends through runtime.Goexit
// sends [ErrGoexit]. what names the goroutine in the log ("walk", "bash
// output", ...).
func Go(what string, fn func() error, wrap Wrap) <-chan error {
	done := make(chan error, 1)
	go func() {
		defer close(done)
		sent := false
		defer func() {
			if !sent { // runtime.Goexit: report it rather than nothing
				done <- ErrGoexit
			}
		}()
		defer Recover(what, wrap, func(err error) { done <- err; sent = true })
		err := fn()
		done <- err
		sent = true
	}()
	return done
}
