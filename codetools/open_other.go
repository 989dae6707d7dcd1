//go:build !unix

package codetools

// openFlagNonBlock is 0 where open(2) of a special file does not block the
// way a Unix named pipe does.
const openFlagNonBlock = 0

// isNoReader is false where named pipes do not exist.
func isNoReader(error) bool { return false }
