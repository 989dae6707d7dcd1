//go:build unix

package proc

import (
	"errors"
	"os/exec"
	"syscall"

	"github.com/llmtoolkit/llmtoolkit/internal/sandbox"
)

// ExitCode returns the exit code of a finished command, 128+N for a death
// by signal N, as shells report it.
func ExitCode(err error) int {
	var se *sandbox.ExitError
	if errors.As(err, &se) {
		return se.ExitCode()
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return -1
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ee.ExitCode()
}
