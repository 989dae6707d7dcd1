//go:build !linux

package codetools

import (
	"io"
	"os"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

// Elsewhere the walkers open every folder as an [os.Root] below its parent,
// so a file or a subfolder is opened with a single confined step of its own
// name, and the type of every file is checked on the opened handle.
// Windows has no named pipes in folders; on the other Unix systems
// os.Root.OpenRoot opens a folder without O_NONBLOCK, so a pipe renamed over
// a subfolder between the Lstat and the open can still block there.

type walkDirOS struct {
	root *os.Root
	conf *confine.Root // the root the walk is confined to, for errors
}

// openWalkStart opens the folder rel of root (p names it in errors) where a
// walk starts.
func openWalkStart(conf *confine.Root, p, rel string) (*walkDir, error) {
	f, _, err := conf.Open(p, rel, confine.Dir)
	if err != nil {
		return nil, err
	}
	f.Close()
	r, err := conf.FS.OpenRoot(rel)
	if err != nil {
		return nil, conf.FileError(p, err)
	}
	d := &walkDir{}
	d.root, d.conf = r, conf
	return d, nil
}

// openSub opens the subfolder name; a symbolic link is refused.
func (d *walkDir) openSub(name string) (*walkDir, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	s := &walkDir{}
	s.root, s.conf = r, d.conf
	return s, nil
}

func (d *walkDir) entries() ([]os.DirEntry, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.ReadDir(-1)
}

func (d *walkDir) close() { d.root.Close() }

// open opens a regular file of the folder for reading; the type is checked
// on the opened file.
func (d *walkDir) open(name string) (io.ReadCloser, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	f, _, err := d.conf.OpenIn(d.root, name, name, os.O_RDONLY, 0, confine.File)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// readFile reads the ignore file name of the folder; rel names it in
// errors. See ignore_files.go.
func (d *walkDir) readFile(name, rel string) ([]byte, error) {
	return readIgnoreFileIn(d.conf, d.root, name, rel)
}

func (d *walkDir) modTime(name string) (time.Time, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}

// size returns the size of the entry name, without following a link.
func (d *walkDir) size(name string) (int64, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// readlink returns the target of the symbolic link name.
func (d *walkDir) readlink(name string) (string, error) { return d.root.Readlink(name) }
