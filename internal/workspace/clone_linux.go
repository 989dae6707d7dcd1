package workspace

import (
	"os"

	"golang.org/x/sys/unix"
)

// cloneInto makes out, an empty file, share in's blocks (FICLONE, as on
// Btrfs, XFS and bcachefs); false where the file system cannot, and the
// caller copies.
func cloneInto(out, in *os.File) bool {
	return unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil
}
