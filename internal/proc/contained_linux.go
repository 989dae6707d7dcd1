//go:build linux

package proc

import (
	"errors"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// containedGuard ends a call whose command the kernel contains (the init
// of a PID namespace, see internal/sandbox): killing it ends every process
// of the call, and once it has exited none is left. It waits without
// reaping, so that the pid cannot be reused before KillAll is done.
type containedGuard struct {
	cmd     *sandbox.Cmd
	waitErr error
	reaped  bool
	exited  chan struct{}
}

func newContainedGuard(cmd *sandbox.Cmd) *containedGuard {
	return &containedGuard{cmd: cmd, exited: make(chan struct{})}
}

// Started implements Guard.
func (g *containedGuard) Started() {}

// WaitExited returns when the command has exited, leaving it unreaped.
func (g *containedGuard) WaitExited() {
	defer close(g.exited)
	if ch := g.cmd.Exited(); ch != nil { // a session's server reports the end
		<-ch
		return
	}
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, g.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err == nil {
			return
		}
		if !errors.Is(err, unix.EINTR) {
			g.waitErr, g.reaped = g.cmd.Wait(), true
			return
		}
	}
}

// KillAll kills the command, and with it every process of the call; "" as
// the kernel leaves none. It does nothing once the command was reaped.
func (g *containedGuard) KillAll() string {
	if g.reaped {
		return ""
	}
	_ = g.cmd.Kill() // an error means it is already gone
	return ""
}

// Reap collects the command's exit status. By then the namespace is empty.
func (g *containedGuard) Reap() error {
	if !g.reaped {
		g.waitErr, g.reaped = g.cmd.Wait(), true
	}
	return g.waitErr
}
