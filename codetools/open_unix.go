//go:build unix

package codetools

import (
	"errors"
	"syscall"
)

// openFlagNonBlock makes open(2) of a named pipe return at once.
const openFlagNonBlock = syscall.O_NONBLOCK

// isNoReader reports ENXIO: opening a named pipe for writing, without
// blocking, while nothing reads it.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }
