//go:build !unix

package confine

import "io/fs"

// openFlagNonBlock is 0 where open(2) of a special file does not block the
// way a Unix named pipe does.
const openFlagNonBlock = 0

// isNoReader is false where named pipes do not exist.
func isNoReader(error) bool { return false }

// LinkCount reports false: where the file info does not carry a link
// count, every file counts as having one name.
func LinkCount(fs.FileInfo) (uint64, bool) { return 0, false }
