//go:build !linux

package proc

import "os/exec"

// reaper waits for a bash call's command once, for the process guards that
// have nothing more to do at exit than reap it (every system but Linux).
type reaper struct {
	cmd     *exec.Cmd
	trap    *Trap
	waitErr error
	reaped  bool
}

// Started implements Guard.
func (g *reaper) Started() {}

// WaitExited returns when the command has exited (and reaps it).
func (g *reaper) WaitExited() {
	g.waitErr, g.reaped = g.cmd.Wait(), true
}

// Reap waits for the command if WaitExited did not, and returns its error.
func (g *reaper) Reap() error {
	if !g.reaped {
		g.waitErr, g.reaped = g.cmd.Wait(), true
	}
	return g.waitErr
}
