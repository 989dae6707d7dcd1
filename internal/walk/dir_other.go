//go:build !linux

package walk

import (
	"io"
	"os"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// Elsewhere a Dir is an [os.Root] opened below its parent (see the package
// doc), so a file or a subfolder is opened with a single confined step of
// its own name, and the type of every file is checked on the opened handle.

type dirOS struct {
	root *os.Root
	conf *confine.Root // the root the walk is confined to, for errors
}

// OpenStart opens the folder rel of r (p names it in errors) where a walk
// starts. The caller closes it.
func OpenStart(r *confine.Root, p, rel string) (*Dir, error) {
	f, _, err := r.Open(p, rel, confine.Dir)
	if err != nil {
		return nil, err
	}
	f.Close()
	sub, err := r.FS.OpenRoot(rel)
	if err != nil {
		return nil, r.FileError(p, err)
	}
	d := &Dir{}
	d.root, d.conf = sub, r
	return d, nil
}

// OpenSub opens the subfolder name; a symbolic link is refused. The caller
// closes it.
func (d *Dir) OpenSub(name string) (*Dir, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	s := &Dir{}
	s.root, s.conf = r, d.conf
	return s, nil
}

// Entries lists the folder.
func (d *Dir) Entries() ([]os.DirEntry, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

// Close closes the folder.
func (d *Dir) Close() { d.root.Close() }

// Open opens a regular file of the folder for reading; the type is checked
// on the opened file.
func (d *Dir) Open(name string) (io.ReadCloser, error) { return d.open(name, false) }

// OpenOneName is [Dir.Open] for a walk under the host's deny rules: a file
// with more than one name (hard links, counted on the opened file, where
// the system gives the count) is refused with an error wrapping
// [confine.ErrLinked].
func (d *Dir) OpenOneName(name string) (io.ReadCloser, error) { return d.open(name, true) }

func (d *Dir) open(name string, oneName bool) (io.ReadCloser, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	f, info, err := d.conf.OpenIn(d.root, name, name, os.O_RDONLY, 0, confine.File)
	if err != nil {
		return nil, err
	}
	if oneName {
		if err := confine.CheckLinksOf(name, info); err != nil {
			f.Close()
			return nil, err
		}
	}
	return f, nil
}

// ReadIgnore reads the ignore file name of the folder under the rules of
// the package doc; rel names it in errors.
func (d *Dir) ReadIgnore(name, rel string) ([]byte, error) {
	return readIgnoreFileIn(d.conf, d.root, name, rel)
}

// ModTime returns the modification time of the entry name, without
// following a link.
func (d *Dir) ModTime(name string) (time.Time, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// Size returns the size of the entry name, without following a link.
func (d *Dir) Size(name string) (int64, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Readlink returns the target of the symbolic link name.
func (d *Dir) Readlink(name string) (string, error) { return d.root.Readlink(name) }
