//go:build !unix

package codetools

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// bashKillScope tells the model, in bash's description, what is killed.
const bashKillScope = "The command is killed after timeout seconds (default %d, at most %d); " +
	"on this system processes it started may survive it."

// procGuard kills a bash call's command. Without process groups its
// children may survive it.
type procGuard struct{ reaper }

func newProcGuard(cmd *exec.Cmd, _ *os.File, trap *panicTrap) *procGuard {
	return &procGuard{reaper{cmd: cmd, trap: trap}}
}

// killAll kills the command and returns a note for the answer if that
// failed.
func (g *procGuard) killAll() string {
	if err := g.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Sprintf("the command could not be killed: %v", err)
	}
	return ""
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
