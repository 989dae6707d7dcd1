package walk

import (
	"bytes"
	"encoding/binary"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// direntBufs are getdents(2) buffers, reused from folder to folder.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 16<<10); return &b }}

// Entries lists the folder, in the order of the system's listing, as
// os.File.ReadDir does, from getdents(2) on its descriptor: each entry's
// type is the listing's (one lstat for a file system that does not give
// it; an entry that is gone by then is left out).
func (d *Dir) Entries() ([]os.DirEntry, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	buf := *bp
	var entries []os.DirEntry
	for {
		n, err := unix.Getdents(d.fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return entries, &os.PathError{Op: "getdents", Path: ".", Err: err}
		}
		if n <= 0 {
			return entries, nil
		}
		entries = d.parseDirents(buf[:n], entries)
	}
}

// parseDirents appends the entries of a getdents(2) answer (struct
// linux_dirent64: d_ino, d_off, d_reclen, d_type, d_name) but "." and "..".
// The entries of one answer are one block and their names one string, not
// two small objects each: a walk's garbage is what makes the garbage
// collector run while it goes, and the entries were a third of it.
func (d *Dir) parseDirents(b []byte, entries []os.DirEntry) []os.DirEntry {
	count, size := 0, 0
	eachDirent(b, func(name []byte, _ byte) { count, size = count+1, size+len(name) })
	if count == 0 {
		return entries
	}
	block := make([]dirEntry, 0, count)
	buf := make([]byte, 0, size)
	eachDirent(b, func(name []byte, _ byte) { buf = append(buf, name...) })
	names := unsafe.String(unsafe.SliceData(buf), len(buf)) // buf is not written again
	entries = slices.Grow(entries, count)
	at := 0
	eachDirent(b, func(raw []byte, typ byte) {
		name := names[at : at+len(raw)]
		at += len(raw)
		block = append(block, dirEntry{d: d, name: name})
		e := &block[len(block)-1]
		switch typ {
		case unix.DT_REG:
		case unix.DT_DIR:
			e.typ = fs.ModeDir
		case unix.DT_LNK:
			e.typ = fs.ModeSymlink
		case unix.DT_FIFO:
			e.typ = fs.ModeNamedPipe
		case unix.DT_SOCK:
			e.typ = fs.ModeSocket
		case unix.DT_CHR:
			e.typ = fs.ModeDevice | fs.ModeCharDevice
		case unix.DT_BLK:
			e.typ = fs.ModeDevice
		default: // DT_UNKNOWN: the listing does not say
			var st unix.Stat_t
			if d.lstat(e.name, &st) != nil {
				return
			}
			e.typ = fileMode(st.Mode).Type()
		}
		entries = append(entries, e)
	})
	return entries
}

// eachDirent calls fn with the name and type of each record of a
// getdents(2) answer but deleted ones, "." and "..".
func eachDirent(b []byte, fn func(name []byte, typ byte)) {
	const nameAt = 19 // offset of d_name
	for len(b) >= nameAt {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameAt || reclen > len(b) {
			break
		}
		rec := b[:reclen]
		b = b[reclen:]
		if binary.NativeEndian.Uint64(rec[0:8]) == 0 { // a deleted entry
			continue
		}
		name := rec[nameAt:]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if string(name) == "." || string(name) == ".." {
			continue
		}
		fn(name, rec[18])
	}
}

// dirEntry is an entry of a folder's listing ([fs.DirEntry]).
type dirEntry struct {
	d    *Dir
	name string
	typ  fs.FileMode
}

func (e *dirEntry) Name() string      { return e.name }
func (e *dirEntry) IsDir() bool       { return e.typ.IsDir() }
func (e *dirEntry) Type() fs.FileMode { return e.typ }

// Info lstats the entry in its folder, which must still be open.
func (e *dirEntry) Info() (fs.FileInfo, error) {
	fi := &fileInfo{name: e.name}
	if err := e.d.lstat(e.name, &fi.st); err != nil {
		return nil, err
	}
	return fi, nil
}

// fileInfo is an [fs.FileInfo] from an lstat.
type fileInfo struct {
	name string
	st   unix.Stat_t
}

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) Mode() fs.FileMode  { return fileMode(fi.st.Mode) }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return &fi.st }

// fileMode is the fs.FileMode of a stat's st_mode, as package os makes it.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
