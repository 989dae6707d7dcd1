//go:build !linux

package codetools

import (
	"io"
	"os"
	"time"
)

// Elsewhere the walker opens every folder as an [os.Root] below its parent,
// so a file is opened with a single confined step of its own name.

type walkDirOS struct {
	root *os.Root
}

func openWalkStart(root *os.Root, name string) (*walkDir, error) {
	r, err := root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	d := &walkDir{}
	d.root = r
	return d, nil
}

func (d *walkDir) openSub(name string) (*walkDir, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.IsDir() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	r, err := d.root.OpenRoot(name)
	if err != nil {
		return nil, err
	}
	s := &walkDir{}
	s.root = r
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

func (d *walkDir) open(name string) (io.ReadCloser, error) {
	if fi, err := d.root.Lstat(name); err != nil || !fi.Mode().IsRegular() {
		return nil, &os.PathError{Op: "open", Path: name, Err: os.ErrInvalid}
	}
	return d.root.Open(name)
}

// readFile reads the ignore file name of the folder; rel names it in
// errors. See ignore_files.go.
func (d *walkDir) readFile(name, rel string) ([]byte, error) {
	return readIgnoreFileIn(d.root, name, rel)
}

func (d *walkDir) modTime(name string) (time.Time, error) {
	fi, err := d.root.Lstat(name)
	if err != nil {
		return time.Time{}, err
	}
	return fi.ModTime(), nil
}
