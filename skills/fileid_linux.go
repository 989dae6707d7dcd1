package skills

import (
	"io/fs"
	"syscall"
)

// fileID is what tells a file from another, or from itself changed, beyond
// its size and time: device, inode and status-change time.
type fileID struct {
	dev, ino       uint64
	ctime, ctimeNs int64
}

func idOf(info fs.FileInfo) fileID {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}
	}
	return fileID{dev: uint64(st.Dev), ino: uint64(st.Ino), ctime: int64(st.Ctim.Sec), ctimeNs: int64(st.Ctim.Nsec)}
}
