package codetools

import (
	"errors"
	"io"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// On Linux the walker works on raw descriptors: openat with O_NOFOLLOW of a
// single name relative to an open folder is confined by construction, and
// it skips the bookkeeping of *os.File (poller registration, fcntl, fstat)
// that costs more than the read itself for small files.

// walkDirOS is an open folder: its *os.File (to list it, and to keep the
// descriptor alive) and the raw descriptor.
type walkDirOS struct {
	f  *os.File
	fd int
}

func openWalkStart(root *os.Root, name string) (*walkDir, error) {
	f, err := root.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := sc.Control(func(raw uintptr) {
		fd, dupErr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0)
	}); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	return newWalkDir(fd, name), nil
}

func newWalkDir(fd int, name string) *walkDir {
	d := &walkDir{}
	d.fd = fd
	d.f = os.NewFile(uintptr(fd), name)
	return d
}

func (d *walkDir) openSub(name string) (*walkDir, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return newWalkDir(fd, name), nil
}

func (d *walkDir) entries() ([]os.DirEntry, error) { return d.f.ReadDir(-1) }

func (d *walkDir) close() { d.f.Close() }

// open opens a regular file of the folder for reading. O_NONBLOCK keeps a
// pipe swapped in after the listing from blocking the open.
func (d *walkDir) open(name string) (io.ReadCloser, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	return rawFile(fd), nil
}

// readFile reads the ignore file name of the folder; rel names it in
// errors. See ignore_files.go.
func (d *walkDir) readFile(name, rel string) ([]byte, error) {
	return readIgnoreFileAt(d.fd, name, rel)
}

func (d *walkDir) modTime(name string) (time.Time, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return time.Time{}, &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		return time.Unix(st.Mtim.Unix()), nil
	}
}

func openat(dirfd int, name string, flags int) (int, error) {
	for {
		fd, err := unix.Openat(dirfd, name, flags, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return -1, &os.PathError{Op: "openat", Path: name, Err: err}
		}
		return fd, nil
	}
}

// rawFile is a file descriptor read with plain read(2) calls.
type rawFile int

func (f rawFile) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	for {
		n, err := unix.Read(int(f), p)
		if err == unix.EINTR {
			continue
		}
		if errors.Is(err, unix.EAGAIN) { // a pipe: nothing to search
			return 0, io.EOF
		}
		if err != nil {
			return 0, err
		}
		if n == 0 {
			return 0, io.EOF
		}
		return n, nil
	}
}

func (f rawFile) Close() error { return unix.Close(int(f)) }
