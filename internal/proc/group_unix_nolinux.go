//go:build unix && !linux

package proc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// KillScope tells the model, in bash's description, what is killed.
const KillScope = "The command is killed with its child processes after timeout seconds (default %d, at most %d); " +
	"background processes it leaves are killed when it ends, except those that leave its process group (setsid, set -m)."

// procGuard kills a bash call's processes. Without /proc it only reaches
// the shell's process group: processes that start their own group or
// session survive on this system.
type procGuard struct{ reaper }

func newProcGuard(cmd *exec.Cmd, _ *os.File, trap *Trap) *procGuard {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setsid = true
	return &procGuard{reaper{cmd: cmd, trap: trap}}
}

// KillAll kills the shell's process group and returns a note for the
// answer if that failed. Processes outside the group are not seen.
func (g *procGuard) KillAll() string {
	err := syscall.Kill(-g.cmd.Process.Pid, syscall.SIGKILL)
	if err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Sprintf("the command's processes could not be killed: %v", err)
	}
	return ""
}
