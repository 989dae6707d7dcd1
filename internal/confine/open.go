package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
)

// Want says what an open of a user-named path expects to find.
type Want int

const (
	File   Want = iota // a regular file
	Dir                // a folder
	Either             // a regular file or a folder
)

// Open opens the root-relative path rel (p names it in errors) for reading
// without blocking, and checks the file type on the opened descriptor
// (never on an earlier stat, which a rename can race): anything that is not
// what want asks for is closed and refused with an error that names p. The
// caller closes the file.
func (r *Root) Open(p, rel string, want Want) (*os.File, fs.FileInfo, error) {
	return r.OpenIn(r.FS, p, rel, os.O_RDONLY, 0, want)
}

// OpenIn is Open in dir (r.FS or a folder opened below it), with the flags
// and mode of OpenFile (O_NONBLOCK is added). The write tools use it too
// (with O_WRONLY), so that a pipe renamed over a file is never written to.
func (r *Root) OpenIn(dir *os.Root, p, rel string, flag int, perm fs.FileMode, want Want) (*os.File, fs.FileInfo, error) {
	f, err := dir.OpenFile(rel, flag|openFlagNonBlock, perm)
	if err != nil {
		if isNoReader(err) {
			// ENXIO: a named pipe opened for writing with no reader, or a
			// socket (which open(2) always refuses so). Name which.
			if info, serr := dir.Stat(rel); serr == nil && info.Mode()&fs.ModeSocket != 0 {
				return nil, nil, CheckKind(p, info, want)
			}
			return nil, nil, fmt.Errorf("%s is a named pipe, not a regular file; refused", p)
		}
		return nil, nil, r.FileError(p, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, r.FileError(p, err)
	}
	if err := CheckKind(p, info, want); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// CheckKind refuses a file whose type is not what want asks for, with an
// error that names p and says what to use instead.
func CheckKind(p string, info fs.FileInfo, want Want) error {
	switch {
	case info.IsDir():
		if want == File {
			return fmt.Errorf("%s is a directory, not a file: use list_directory or tree to see what it holds", p)
		}
	case info.Mode().IsRegular():
		if want == Dir {
			return fmt.Errorf("not a directory: %s", p)
		}
	default:
		return fmt.Errorf("%s is not a regular file or folder (%s); refused", p, fsmode.Name(info.Mode()))
	}
	return nil
}

// ErrLinked is wrapped by the error for a regular file with more than one
// name (hard links), refused by [CheckLinks].
var ErrLinked = errors.New("the file has other names (hard links)")

// CheckLinks refuses the regular file p whose opened descriptor says it has
// n names (st_nlink): a tool whose access is checked by path (a permission
// layer's deny rules) cannot see the other names, which may be in a folder
// the rules deny, or outside the root. A count of 0 or 1 passes. Callers
// take n from the descriptor they read or write (fstat), never from a
// second lookup of the path, so a link made between the two cannot slip
// through.
func CheckLinks(p string, n uint64) error {
	if n <= 1 {
		return nil
	}
	return fmt.Errorf("%s has %d names (hard links), and the host's permission rules are in force: its other names may be in a folder they deny, "+
		"and the rules see one name only, so its contents are neither read nor written; ask the user for a copy with a single name: %w", p, n, ErrLinked)
}

// CheckLinksOf is [CheckLinks] for the file info of an opened descriptor
// (its Stat): a regular file's link count where the system gives one.
func CheckLinksOf(p string, info fs.FileInfo) error {
	if !info.Mode().IsRegular() {
		return nil
	}
	n, ok := LinkCount(info)
	if !ok {
		return nil
	}
	return CheckLinks(p, n)
}
