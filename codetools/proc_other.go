//go:build !unix

package codetools

import (
	"errors"
	"os/exec"
)

func startInOwnGroup(cmd *exec.Cmd) {}

// killGroup kills the command; without process groups its children may
// survive it.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	return -1
}
