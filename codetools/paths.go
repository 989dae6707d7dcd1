package codetools

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// ErrOutsideRoot is wrapped by the error for a path that leaves the root.
var ErrOutsideRoot = errors.New("outside the working directory")

// rel turns a path argument into a clean, slash-free-of-".." path relative to
// the root, for use with c.root (os.Root). Relative paths are taken from the
// root; absolute paths are accepted when they are inside it. The empty path
// is refused unless allowEmpty, when it means ".". A name quoted as the
// listings show it (shownName) is read back first. os.Root still checks
// every component, so a symbolic link cannot escape either.
func (c *CodeTools) rel(arg, p string, allowEmpty bool) (string, error) {
	p = readName(p) // a name as the listings show it (shown_names.go)
	if strings.IndexByte(p, 0) >= 0 {
		return "", fmt.Errorf("%s %q contains a NUL byte", arg, p)
	}
	if p == "" {
		if !allowEmpty {
			return "", fmt.Errorf("%s is empty; give a path relative to the working directory", arg)
		}
		return ".", nil
	}
	native := filepath.FromSlash(p)
	if filepath.IsAbs(native) {
		r, err := filepath.Rel(c.dir, filepath.Clean(native))
		if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
			return "", fmt.Errorf("path %q is %w", p, ErrOutsideRoot)
		}
		return r, nil
	}
	r := filepath.Clean(native)
	if r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("path %q is %w", p, ErrOutsideRoot)
	}
	return r, nil
}
