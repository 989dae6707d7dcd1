//go:build !unix

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
)

// KillScope tells the model, in bash's description, what is killed.
const KillScope = "The command is killed after timeout seconds (default %d, at most %d); " +
	"on this system processes it started may survive it."

// procGuard kills a bash call's command. Without process groups its
// children may survive it.
type procGuard struct{ reaper }

func newProcGuard(cmd *exec.Cmd, _ *os.File, trap *Trap) *procGuard {
	return &procGuard{reaper{cmd: cmd, trap: trap}}
}

// KillAll kills the command and returns a note for the answer if that
// failed.
func (g *procGuard) KillAll() string {
	if err := g.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Sprintf("the command could not be killed: %v", err)
	}
	return ""
}
