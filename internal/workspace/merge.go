package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrConflict is wrapped by the error of an Apply whose changes do not
// merge with the parent's tree as it is now: nothing was changed.
var ErrConflict = errors.New("workspace: the changes conflict with the parent's tree")

// ConflictError is the error of an Apply with conflicts: it wraps
// [ErrConflict] and names each file, with why.
type ConflictError struct {
	// Files are the conflicting files (slash-separated, relative to the
	// parent's root), in order.
	Files []string
	// Reasons holds why each of Files conflicts, at the same index.
	Reasons []string
}

// Error names each file and its reason.
func (e *ConflictError) Error() string {
	parts := make([]string, len(e.Files))
	for i, f := range e.Files {
		parts[i] = f + " (" + e.Reasons[i] + ")"
	}
	return ErrConflict.Error() + ": " + strings.Join(parts, ", ")
}

// Unwrap returns [ErrConflict].
func (e *ConflictError) Unwrap() error { return ErrConflict }

// CheckFunc decides whether Apply may write a file (slash-separated,
// relative to the parent's root): nil allows it, an error refuses the
// whole Apply before anything is written.
type CheckFunc func(ctx context.Context, rel string) error

// change is one file a workspace changed: its content at the base (the
// common ancestor) and in the workspace, nil when the file is not there.
type change struct {
	rel          string
	base, theirs []byte
	perm         fs.FileMode // the workspace's mode bits, for a file it has
	unsupported  string      // why it cannot be merged (a symbolic link, a submodule), if so
}

// write is one file of the parent's tree an Apply replaces (data nil:
// removes).
type write struct {
	rel  string
	data []byte
	perm fs.FileMode
}

// merge merges changes into the parent's tree at root, three ways per
// file (the base, the parent's file now, the workspace's), whole or not
// at all: every file is merged in memory and checked first; a conflict
// or a refusal writes nothing; a write that fails undoes those made.
func merge(ctx context.Context, root string, changes []change, check CheckFunc) error {
	r, err := os.OpenRoot(root)
	if err != nil {
		return fmt.Errorf("workspace: opening the parent's tree: %w", err)
	}
	defer r.Close()
	var writes []write
	conflict := &ConflictError{}
	add := func(rel, why string) {
		conflict.Files = append(conflict.Files, rel)
		conflict.Reasons = append(conflict.Reasons, why)
	}
	for _, c := range changes {
		if err := ctx.Err(); err != nil {
			return err
		}
		if c.unsupported != "" {
			add(c.rel, c.unsupported)
			continue
		}
		ours, ok, why := readIn(r, c.rel)
		if why != "" {
			add(c.rel, why)
			continue
		}
		if !ok {
			ours = nil
		}
		switch {
		case sameFile(ours, c.base): // the parent did not touch it
			writes = append(writes, write{c.rel, c.theirs, c.perm})
		case sameFile(ours, c.theirs): // the same change on both sides
		case ours == nil:
			add(c.rel, "removed in the parent, changed in the workspace")
		case c.base == nil:
			add(c.rel, "added on both sides, differently")
		case c.theirs == nil:
			add(c.rel, "changed in the parent, removed in the workspace")
		case binary(ours) || binary(c.base) || binary(c.theirs):
			add(c.rel, "a binary file changed on both sides")
		default:
			merged, clean, err := mergeFile(ctx, ours, c.base, c.theirs)
			if err != nil {
				return err
			}
			if !clean {
				add(c.rel, "both sides changed the same lines")
				continue
			}
			writes = append(writes, write{c.rel, merged, c.perm})
		}
	}
	if len(conflict.Files) > 0 {
		return conflict
	}
	if check != nil {
		for _, w := range writes {
			if err := check(ctx, w.rel); err != nil {
				return fmt.Errorf("workspace: applying %s was refused, nothing was changed: %w", w.rel, err)
			}
		}
	}
	return commit(r, writes)
}

// commit makes writes in r, undoing those made when one fails.
func commit(r *os.Root, writes []write) error {
	var done []write // the originals of what was written
	undo := func() {
		for i := len(done) - 1; i >= 0; i-- {
			o := done[i]
			if o.data == nil {
				_ = r.Remove(o.rel)
			} else {
				_ = r.WriteFile(o.rel, o.data, o.perm)
			}
		}
	}
	for _, w := range writes {
		name := filepath.FromSlash(w.rel)
		old, had, _ := readIn(r, w.rel)
		orig := write{rel: name}
		if had {
			orig.data, orig.perm = old, 0o644
			if info, err := r.Lstat(name); err == nil {
				orig.perm = info.Mode().Perm()
			}
		}
		var err error
		if w.data == nil {
			err = r.Remove(name)
			if errors.Is(err, fs.ErrNotExist) {
				err = nil
			}
		} else {
			if err = r.MkdirAll(filepath.Dir(name), 0o755); err == nil {
				err = r.WriteFile(name, w.data, w.perm)
				if err == nil {
					err = r.Chmod(name, w.perm) // WriteFile keeps an existing file's mode
				}
			}
		}
		done = append(done, orig)
		if err != nil {
			undo()
			return fmt.Errorf("workspace: applying %s (undone, nothing was changed): %w", w.rel, err)
		}
	}
	return nil
}

// readIn reads the regular file rel of r: ok is false when there is no
// file; why says what else is there (a folder, a link, a file too big).
func readIn(r *os.Root, rel string) (data []byte, ok bool, why string) {
	name := filepath.FromSlash(rel)
	info, err := r.Lstat(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, ""
	}
	if err != nil {
		return nil, false, err.Error()
	}
	if !info.Mode().IsRegular() {
		return nil, false, "not a regular file in the parent's tree"
	}
	if info.Size() > maxPatchBytes {
		return nil, false, fmt.Sprintf("more than %d bytes", maxPatchBytes)
	}
	b, err := r.ReadFile(name)
	if err != nil {
		return nil, false, err.Error()
	}
	if b == nil {
		b = []byte{}
	}
	return b, true, ""
}

// sameFile compares two contents, nil meaning no file.
func sameFile(a, b []byte) bool {
	if (a == nil) != (b == nil) {
		return false
	}
	return bytes.Equal(a, b)
}

// binary reports whether b looks binary (a NUL in its first 8000 bytes,
// git's rule).
func binary(b []byte) bool {
	return bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0
}

// mergeFile merges theirs into ours from base with git merge-file, in
// memory; clean is false on a conflict.
func mergeFile(ctx context.Context, ours, base, theirs []byte) (merged []byte, clean bool, err error) {
	dir, err := os.MkdirTemp("", "llmtoolkit-merge-")
	if err != nil {
		return nil, false, err
	}
	defer os.RemoveAll(dir)
	names := []string{"ours", "base", "theirs"}
	for i, b := range [][]byte{ours, base, theirs} {
		if err := os.WriteFile(filepath.Join(dir, names[i]), b, 0o600); err != nil {
			return nil, false, err
		}
	}
	cmd := exec.CommandContext(ctx, "git", "merge-file", "-p", "ours", "base", "theirs")
	cmd.Dir = dir
	cmd.Env = gitEnv()
	var out bytes.Buffer
	cmd.Stdout = &out
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return out.Bytes(), true, nil
	case errors.As(err, &ee) && ee.ExitCode() > 0 && ee.ExitCode() < 128: // the number of conflicts
		return nil, false, nil
	default:
		return nil, false, fmt.Errorf("workspace: git merge-file: %w", err)
	}
}
