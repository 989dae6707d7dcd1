//go:build !unix

package proc

import (
	"errors"
	"os/exec"
)

// ExitCode returns the exit code of a finished command, -1 when err is
// not an exit status.
func ExitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
