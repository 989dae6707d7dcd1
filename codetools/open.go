package codetools

import (
	"fmt"
	"io/fs"
	"os"

	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
)

// fileKind says what an open of a user-named path expects to find.
type fileKind int

const (
	wantFile   fileKind = iota // a regular file
	wantDir                    // a folder
	wantEither                 // a regular file or a folder
)

// openChecked opens a root-relative path for reading without blocking and
// checks the file type on the opened descriptor (never on an earlier stat, which
// a rename can race): anything that is not what want asks for is closed and
// refused with an error that names p. The caller closes the file.
func (c *CodeTools) openChecked(p, rel string, want fileKind) (*os.File, fs.FileInfo, error) {
	return openCheckedIn(c.root, p, rel, os.O_RDONLY, 0, want)
}

// openCheckedIn is openChecked on any os.Root, with the flags and mode of
// OpenFile (O_NONBLOCK is added). It is used by the write tools too (with
// O_WRONLY), so that a pipe renamed over a file is never written to.
func openCheckedIn(root *os.Root, p, rel string, flag int, perm fs.FileMode, want fileKind) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(rel, flag|openFlagNonBlock, perm)
	if err != nil {
		if isNoReader(err) {
			// ENXIO: a named pipe opened for writing with no reader, or a
			// socket (which open(2) always refuses so). Name which.
			if info, serr := root.Stat(rel); serr == nil && info.Mode()&fs.ModeSocket != 0 {
				return nil, nil, checkKind(p, info, want)
			}
			return nil, nil, fmt.Errorf("%s is a named pipe, not a regular file; refused", p)
		}
		return nil, nil, fileError(p, err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fileError(p, err)
	}
	if err := checkKind(p, info, want); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// checkKind refuses a file whose type is not what want asks for.
func checkKind(p string, info fs.FileInfo, want fileKind) error {
	switch {
	case info.IsDir():
		if want == wantFile {
			return fmt.Errorf("%s is a directory, not a file. Use list_directory or tree to see what it holds.", p)
		}
	case info.Mode().IsRegular():
		if want == wantDir {
			return fmt.Errorf("Not a directory: %s", p)
		}
	default:
		return fmt.Errorf("%s is not a regular file or folder (%s); refused", p, fsmode.Name(info.Mode()))
	}
	return nil
}
