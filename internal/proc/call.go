package proc

import (
	"fmt"
	"os"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// Guard ends the processes of one call: a contained command's (the kernel
// does it) or, as a fallback, the process guard's (a /proc scan on Linux,
// the process group elsewhere).
type Guard interface {
	Started()        // the command runs
	WaitExited()     // returns when the command has exited
	KillAll() string // kills every process of the call; a note on failure, "" otherwise
	Reap() error     // the command's exit status (exec's error)
}

// NewGuard prepares cmd, before it starts, and returns the guard that will
// end its processes. out is the write end of the command's output pipe
// (the scan recognises the call's processes by it); the guard's goroutines
// run under trap.
func NewGuard(cmd *sandbox.Cmd, out *os.File, trap *Trap) Guard {
	if cmd.Contained {
		return newContainedGuard(cmd)
	}
	return newProcGuard(cmd.Cmd, out, trap)
}

// Trap turns panics in the goroutines of one call into the call's error,
// so that they never crash the host. It runs them under internal/guard.
type Trap struct {
	// Hook, when set (by a test), is called by the goroutines of the call
	// as they start, with their name ("copy", "wait", "watch"), and by
	// [Trap.Stage].
	Hook func(stage string)

	what   string
	wrap   guard.Wrap
	failed chan struct{} // closed at the first panic
	mu     sync.Mutex
	err    error // the first panic
}

// NewTrap returns the trap of one call; what names the call in errors
// ("bash"), wrap makes the error of a panic.
func NewTrap(what string, wrap guard.Wrap) *Trap {
	return &Trap{what: what, wrap: wrap, failed: make(chan struct{})}
}

// Go runs f on a new goroutine, then finally (if not nil), even when f
// panics; the panic is logged with its stack and kept as the call's error.
func (t *Trap) Go(name string, f, finally func()) {
	go func() {
		if finally != nil {
			defer finally()
		}
		defer guard.Recover(t.what+" "+name, t.wrap, func(err error) { t.record(name, err) })
		f()
	}()
}

// record keeps the first panic and closes Failed.
func (t *Trap) record(name string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err == nil {
		t.err = fmt.Errorf("%s: %s: %w", t.what, name, err)
		close(t.failed)
	}
}

// Stage calls Hook, if set, with stage.
func (t *Trap) Stage(stage string) {
	if h := t.Hook; h != nil {
		h(stage)
	}
}

// Failed is closed at the first panic: the call must not let its command
// run on.
func (t *Trap) Failed() <-chan struct{} { return t.failed }

// Err returns the first panic, nil without one.
func (t *Trap) Err() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}
