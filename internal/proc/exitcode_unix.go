//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"
)

// ExitCode returns the exit code of a finished command, 128+N for a death
// by signal N, as shells report it.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
