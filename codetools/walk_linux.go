package codetools

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"golang.org/x/sys/unix"
)

// On Linux the walkers work on raw descriptors: openat with O_NOFOLLOW of a
// single name relative to an open folder is confined by construction, costs
// one step however deep the folder lies, and skips the bookkeeping of
// *os.File (poller registration, fcntl, fstat) that costs more than the
// read itself for small files. Every open is non-blocking (a named pipe
// swapped in after the listing returns at once) and its type is checked on
// the opened descriptor: O_DIRECTORY for folders, fstat for files.

// walkDirOS is an open folder: its *os.File (to list it, and to keep the
// descriptor alive) and the raw descriptor.
type walkDirOS struct {
	f  *os.File
	fd int
}

// openWalkStart opens the folder rel of root (p names it in errors) where a
// walk starts, without blocking, and checks on the descriptor that it is a
// folder.
func openWalkStart(conf *confine.Root, p, rel string) (*walkDir, error) {
	f, _, err := conf.Open(p, rel, confine.Dir)
	if err != nil {
		return nil, err
	}
	sc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	d := &walkDir{}
	d.f = f
	if err := sc.Control(func(raw uintptr) { d.fd = int(raw) }); err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

// openSub opens the subfolder name. O_DIRECTORY makes the kernel check the
// type of what it opens (a pipe or a file is refused before any blocking
// open), O_NOFOLLOW refuses a symbolic link.
func (d *walkDir) openSub(name string) (*walkDir, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	s := &walkDir{}
	s.fd = fd
	s.f = os.NewFile(uintptr(fd), name)
	return s, nil
}

func (d *walkDir) entries() ([]os.DirEntry, error) { return d.f.ReadDir(-1) }

func (d *walkDir) close() { d.f.Close() }

// open opens a regular file of the folder for reading. O_NONBLOCK keeps a
// pipe swapped in after the listing from blocking the open, and fstat on
// the descriptor refuses anything but a regular file (a pipe or a device
// swapped in).
func (d *walkDir) open(name string) (io.ReadCloser, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &os.PathError{Op: "fstat", Path: name, Err: err}
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		unix.Close(fd)
		return nil, &os.PathError{Op: "open", Path: name, Err: errNotRegular}
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

// size returns the size of the entry name, without following a link.
func (d *walkDir) size(name string) (int64, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		return st.Size, nil
	}
}

// readlink returns the target of the symbolic link name.
func (d *walkDir) readlink(name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(d.fd, name, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", &os.PathError{Op: "readlinkat", Path: name, Err: err}
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= 1<<16 {
			return "", &os.PathError{Op: "readlinkat", Path: name, Err: fmt.Errorf("target longer than %d bytes", size)}
		}
	}
}

// errNotRegular refuses a walk entry that is no longer a regular file.
var errNotRegular = errors.New("not a regular file")

func fstat(fd int, st *unix.Stat_t) error {
	for {
		if err := unix.Fstat(fd, st); err != unix.EINTR {
			return err
		}
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
