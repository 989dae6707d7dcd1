package walk

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// On Linux a Dir is a raw descriptor (see the package doc): openat with
// O_NOFOLLOW of a single name relative to the folder, non-blocking, with
// the type checked on the opened descriptor.

// dirOS is an open folder: its raw descriptor, listed with getdents(2)
// (Entries), and for the start folder the *os.File that owns it. A
// subfolder has no *os.File: os.NewFile would cost an fcntl and a poller
// registration (which fails for a folder) per folder.
type dirOS struct {
	f      *os.File // the start folder's; nil for the others
	fd     int
	closed bool
}

// OpenStart opens the folder rel of r (p names it in errors) where a walk
// starts, without blocking, and checks on the descriptor that it is a
// folder. The caller closes it.
func OpenStart(r *confine.Root, p, rel string) (*Dir, error) {
	f, _, err := r.Open(p, rel, confine.Dir)
	if err != nil {
		return nil, err
	}
	sc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		return nil, err
	}
	d := &Dir{}
	d.f = f
	if err := sc.Control(func(raw uintptr) { d.fd = int(raw) }); err != nil {
		f.Close()
		return nil, err
	}
	return d, nil
}

// OpenSub opens the subfolder name. O_DIRECTORY makes the kernel check the
// type of what it opens (a pipe or a file is refused before any blocking
// open), O_NOFOLLOW refuses a symbolic link. The caller closes it.
func (d *Dir) OpenSub(name string) (*Dir, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	s := &Dir{}
	s.fd = fd
	return s, nil
}

// Close closes the folder; closing it again does nothing.
func (d *Dir) Close() {
	if d.closed {
		return
	}
	d.closed = true
	if d.f != nil {
		d.f.Close()
		return
	}
	unix.Close(d.fd)
}

// Open opens a regular file of the folder for reading. O_NONBLOCK keeps a
// pipe swapped in after the listing from blocking the open, and fstat on
// the descriptor refuses anything but a regular file (a pipe or a device
// swapped in). A pipe that gets through reads as empty.
func (d *Dir) Open(name string) (io.ReadCloser, error) { return d.open(name, false) }

// OpenOneName is [Dir.Open] for a walk under the host's deny rules: a file
// with more than one name (hard links, counted on the opened descriptor)
// is refused with an error wrapping [confine.ErrLinked].
func (d *Dir) OpenOneName(name string) (io.ReadCloser, error) { return d.open(name, true) }

func (d *Dir) open(name string, oneName bool) (io.ReadCloser, error) {
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
	if oneName {
		if err := confine.CheckLinks(name, uint64(st.Nlink)); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	left := st.Size
	if left == 0 { // empty, or of unknown size (/proc): read to its end
		left = -1
	}
	return &sizedFile{fd: fd, left: left}, nil
}

// ReadIgnore reads the ignore file name of the folder under the rules of
// the package doc; rel names it in errors. O_NOFOLLOW refuses a symbolic
// link, O_NONBLOCK keeps a named pipe swapped in after the listing from
// blocking the open, and the type is checked on the opened descriptor.
func (d *Dir) ReadIgnore(name, rel string) ([]byte, error) {
	fd, err := openat(d.fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY)
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return nil, fmt.Errorf("%s %w", rel, ErrIgnoreLink)
		}
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	f := rawFile(fd)
	defer f.Close()
	var st unix.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, fmt.Errorf("%s: fstat: %w", rel, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, fmt.Errorf("%s %w", rel, ErrIgnoreNotRegular)
	}
	return readIgnoreData(f, rel)
}

// ModTime returns the modification time of the entry name, without
// following a link.
func (d *Dir) ModTime(name string) (time.Time, error) {
	var st unix.Stat_t
	if err := d.lstat(name, &st); err != nil {
		return time.Time{}, err
	}
	return time.Unix(st.Mtim.Unix()), nil
}

// Size returns the size of the entry name, without following a link.
func (d *Dir) Size(name string) (int64, error) {
	var st unix.Stat_t
	if err := d.lstat(name, &st); err != nil {
		return 0, err
	}
	return st.Size, nil
}

func (d *Dir) lstat(name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(d.fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return &os.PathError{Op: "fstatat", Path: name, Err: err}
		}
		return nil
	}
}

// Readlink returns the target of the symbolic link name.
func (d *Dir) Readlink(name string) (string, error) {
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

// openat opens name relative to dirfd, its path written on the stack:
// unix.Openat allocates it, a small object per file of a walk, and a
// walk's garbage is what makes the garbage collector run while it goes.
func openat(dirfd int, name string, flags int) (int, error) {
	var path [256]byte // a name is at most 255 bytes (NAME_MAX)
	if len(name) >= len(path) || strings.IndexByte(name, 0) >= 0 {
		return openatString(dirfd, name, flags)
	}
	copy(path[:], name) // and the NUL after it, path being zeroed
	for {
		r, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])), uintptr(flags|unix.O_LARGEFILE), 0, 0, 0) // as unix.Openat
		if errno == unix.EINTR {
			continue
		}
		if errno != 0 {
			return -1, &os.PathError{Op: "openat", Path: name, Err: errno}
		}
		return int(r), nil
	}
}

// openatString is openat through unix.Openat, for a name that is not a
// file name (longer than NAME_MAX, or with a NUL: refused by it).
func openatString(dirfd int, name string, flags int) (int, error) {
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

// sizedFile is a regular file read with plain read(2) calls that knows its
// size from the fstat of its open: once a read has brought the file's
// bytes exactly up to that size, the end of the file is reported without
// the read(2) that would return 0 (a file searched costs one read instead
// of two). A file that was larger when it was read than when it was opened
// is read on to its end, as is one whose size is unknown (0: /proc).
type sizedFile struct {
	fd   int
	left int64 // bytes to the size seen at open; < 0 once passed
}

func (f *sizedFile) Read(p []byte) (int, error) {
	if f.left == 0 {
		return 0, io.EOF
	}
	n, err := rawFile(f.fd).Read(p)
	if f.left > 0 && n > 0 {
		if f.left -= int64(n); f.left == 0 {
			f.left = -1 // unknown from here: the file grew, or it ended
			if n < len(p) {
				f.left = 0 // a short read that reached the size: the end
			}
		}
	}
	return n, err
}

func (f *sizedFile) Close() error { return unix.Close(f.fd) }
