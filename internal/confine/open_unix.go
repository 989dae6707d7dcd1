//go:build unix

package confine

import (
	"errors"
	"io/fs"
	"syscall"
)

// openFlagNonBlock makes open(2) of a named pipe return at once.
const openFlagNonBlock = syscall.O_NONBLOCK

// isNoReader reports ENXIO: opening a named pipe for writing, without
// blocking, while nothing reads it.
func isNoReader(err error) bool { return errors.Is(err, syscall.ENXIO) }

// LinkCount returns the number of hard links of the file info describes,
// and false when the system does not say.
func LinkCount(info fs.FileInfo) (uint64, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return uint64(st.Nlink), true
}
