//go:build !linux

package codetools

import "os/exec"

// reaper waits for a bash call's command once, for the process guards that
// have nothing more to do at exit than reap it (every system but Linux).
type reaper struct {
	cmd     *exec.Cmd
	trap    *panicTrap
	waitErr error
	reaped  bool
}

func (g *reaper) started() {}

// waitExited returns when the command has exited (and reaps it).
func (g *reaper) waitExited() {
	g.waitErr, g.reaped = g.cmd.Wait(), true
}

// reap waits for the command if waitExited did not, and returns its error.
func (g *reaper) reap() error {
	if !g.reaped {
		g.waitErr, g.reaped = g.cmd.Wait(), true
	}
	return g.waitErr
}
