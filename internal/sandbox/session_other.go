//go:build !linux

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"
)

// Session is a sandbox shared by many commands; it runs only on Linux.
type Session struct{}

// NewSession fails: no sandbox here.
func NewSession(Backend, Policy) (*Session, error) {
	return nil, fmt.Errorf("%w: no session's sandbox on %s", ErrUnavailable, runtime.GOOS)
}

// Name returns "".
func (*Session) Name() string { return "" }

// Command fails: no sandbox here.
func (*Session) Command(Spec, Policy) (*Cmd, error) {
	_, err := NewSession(nil, Policy{})
	return nil, err
}

// Close does nothing.
func (*Session) Close() error { return nil }

// served is a command of a session's server; none on this system.
type served struct{ exited chan struct{} }

func (*served) start(*exec.Cmd) error { return ErrUnavailable }
func (*served) wait() error           { return ErrUnavailable }
func (*served) kill() error           { return ErrUnavailable }

// ExitError is the error of a command of a session's sandbox that did not
// exit with 0.
type ExitError struct {
	// Status is the exit code, 128+N for a death by signal N.
	Status int
}

func (e *ExitError) Error() string { return fmt.Sprintf("exit status %d", e.Status) }

// ExitCode returns the exit code.
func (e *ExitError) ExitCode() int { return e.Status }

// proxyLink is a command's proxy; none on this system.
type proxyLink struct{}

func (*proxyLink) start(cmd *exec.Cmd) error { return cmd.Start() }

func (*proxyLink) stop() {}
