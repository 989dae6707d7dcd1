// Package guard is the project's one goroutine guard: every goroutine a
// tool starts runs under it, so that a panic there never crashes the host.
//
// A panic is recovered in the goroutine that panicked, logged through
// log/slog with its stack (message "goroutine panicked", attributes
// goroutine, panic and stack), and handed to the caller as an error made
// by a [Wrap] function; codetools wraps it as a *llmtoolkit.PanicError,
// which wraps llmtoolkit.ErrToolPanic. internal packages cannot import the
// root package, hence the Wrap seam.
//
// [Go] runs a function on a new goroutine and returns a channel with its
// error (grep's answer writers, the walker, http_get's conversion).
// [Recover], deferred directly, is the building block for goroutines with
// their own bookkeeping (bash's output reader, exit waiter and process
// watcher, see internal/proc's Trap; the spill files' expiry timer).
// [Recovered] turns a value already recovered (by code that recovers its
// own panics, such as http_get's Markdown converter) into the same logged
// error.
package guard
