package confine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Root is a folder that paths are confined to.
type Root struct {
	// FS is the open root folder; every access goes through it.
	FS *os.Root
	// Dir is the root's absolute, cleaned path, with its links resolved.
	Dir string
	// Outside is wrapped by every error for a path that leaves the root.
	Outside error
	// ReadName, when set, reads back a path argument written as the tools
	// show names (quoted) before anything else is done with it.
	ReadName func(string) string
}

// Canonical is the one function that turns a path argument p (named arg in
// errors) into the path a tool opens: [Root.Rel], then [Root.Resolve]. A
// tool opens what it returns and declares it as its canonical path, so the
// two cannot disagree. The empty path is refused unless allowEmpty, when it
// means the root.
func (r *Root) Canonical(ctx context.Context, arg, p string, allowEmpty bool) (string, error) {
	rel, err := r.Rel(arg, p, allowEmpty)
	if err != nil {
		return "", err
	}
	return r.Resolve(ctx, arg, p, rel)
}

// Rel turns a path argument into a clean path relative to the root, free
// of "..". Relative paths are taken from the root; absolute paths are
// accepted when they are inside it. The empty path is refused unless
// allowEmpty, when it means ".". A path outside is an error wrapping
// r.Outside. Rel does not look at the file system: [Root.Resolve] follows
// the links, and the os.Root checks every component again.
func (r *Root) Rel(arg, p string, allowEmpty bool) (string, error) {
	if r.ReadName != nil {
		p = r.ReadName(p)
	}
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
		rel, ok := r.inside(native)
		if !ok {
			return "", fmt.Errorf("path %q is %w", p, r.Outside)
		}
		return rel, nil
	}
	rel := filepath.Clean(native)
	if leavesRoot(rel) {
		return "", fmt.Errorf("path %q is %w", p, r.Outside)
	}
	return rel, nil
}

// inside returns the absolute path abs relative to the root, and false
// when it lies outside.
func (r *Root) inside(abs string) (string, bool) {
	rel, err := filepath.Rel(r.Dir, filepath.Clean(abs))
	if err != nil || leavesRoot(rel) {
		return "", false
	}
	return rel, true
}

// leavesRoot reports whether a clean relative path climbs above its start.
func leavesRoot(rel string) bool {
	return rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// FileError turns an error from os.Root about p into a message for the
// model: a missing file, a refused permission, a path that leaves the root
// (wrapping r.Outside), or the error itself.
func (r *Root) FileError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file not found: %s", p)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Errorf("permission denied: %s", p)
	case IsEscape(err):
		return r.OutsideError(p)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// OutsideError is the error for path p that os.Root refused because a
// symbolic link leads out of the root.
func (r *Root) OutsideError(p string) error {
	return fmt.Errorf("path %q is %w (through a symbolic link)", p, r.Outside)
}

// IsEscape reports an os.Root refusal: a path or link that leaves the root.
func IsEscape(err error) bool {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error() == "path escapes from parent"
	}
	return false
}
