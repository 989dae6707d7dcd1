package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrTooBig is wrapped by the error of [NewCopy] for a root past its
// limits: what was copied is removed.
var ErrTooBig = errors.New("workspace: the folder is too big to copy")

// Limits bound a [Copy].
type Limits struct {
	// MaxFiles and MaxBytes bound the regular files copied and their
	// total size.
	MaxFiles int
	MaxBytes int64
}

// Copy is a copy of a folder without git made for one sub-agent: Dir is
// the sub-agent's, base the folder as it was copied (the common ancestor
// of the three-way merge of [Copy.Apply]). Files are cloned (FICLONE) where
// the file system shares blocks, else copied; symbolic links and special
// files are not copied.
type Copy struct {
	// Root is the parent's folder.
	Root string
	// Dir is the copy the sub-agent works in.
	Dir  string
	base string
	// Cloned counts the files that share their blocks with the root.
	Cloned int
}

// NewCopy copies root into dir/work (the sub-agent's) and dir/base (the
// ancestor), which must not exist, leaving out .git and skip's names.
func NewCopy(ctx context.Context, root, dir string, lim Limits, skip func(rel string) bool) (*Copy, error) {
	c := &Copy{Root: root, Dir: filepath.Join(dir, "work"), base: filepath.Join(dir, "base")}
	files, bytes := 0, int64(0)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && (d.Name() == ".git" || (skip != nil && skip(filepath.ToSlash(rel)))) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			for _, to := range []string{c.Dir, c.base} {
				if err := os.MkdirAll(filepath.Join(to, rel), 0o755); err != nil {
					return err
				}
			}
		case d.Type().IsRegular():
			info, err := d.Info()
			if err != nil {
				return err
			}
			files, bytes = files+1, bytes+info.Size()
			if (lim.MaxFiles > 0 && files > lim.MaxFiles) || (lim.MaxBytes > 0 && bytes > lim.MaxBytes) {
				return fmt.Errorf("%w: more than %d files or %d bytes in %s", ErrTooBig, lim.MaxFiles, lim.MaxBytes, root)
			}
			for _, to := range []string{c.Dir, c.base} {
				cloned, err := cloneFile(p, filepath.Join(to, rel), info.Mode().Perm())
				if err != nil {
					return err
				}
				if cloned && to == c.Dir {
					c.Cloned++
				}
			}
		}
		return nil
	})
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("workspace: copying %s: %w", root, err)
	}
	return c, nil
}

// cloneFile makes to a copy of from: a clone sharing its blocks when the
// file system allows, else a plain copy. It reports whether it cloned.
func cloneFile(from, to string, perm fs.FileMode) (bool, error) {
	in, err := os.Open(from)
	if err != nil {
		return false, err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return false, err
	}
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		return true, out.Close()
	}
	_, err = io.Copy(out, in)
	return false, errors.Join(err, out.Close())
}

// Diff returns the sub-agent's changes as a unified, binary-safe patch
// (paths a/… and b/… relative to the folder).
func (c *Copy) Diff(ctx context.Context) (string, error) {
	cmd := exec.CommandContext(ctx, "git", "-c", "core.hooksPath=/dev/null", "diff", "--no-index", "--binary", "--no-color", "--no-ext-diff", "--src-prefix=a/", "--dst-prefix=b/", "base", "work")
	cmd.Dir = filepath.Dir(c.Dir)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: there are differences
		return "", fmt.Errorf("workspace: the diff of %s: %w: %s", c.Dir, err, strings.TrimSpace(errb.String()))
	}
	if out.Len() > maxPatchBytes {
		return "", fmt.Errorf("workspace: the diff of %s is more than %d bytes", c.Dir, maxPatchBytes)
	}
	s := strings.NewReplacer("a/base/", "a/", "b/work/", "b/").Replace(out.String())
	return s, nil
}

// Apply merges the sub-agent's changes into the parent's folder, file by
// file three ways (git merge-file: the base, the parent's file now, the
// sub-agent's), whole or not at all: when any file conflicts, nothing is
// written and the error wraps [ErrConflict], naming each file.
func (c *Copy) Apply(ctx context.Context) error {
	changed, err := c.changed()
	if err != nil {
		return err
	}
	type write struct {
		rel  string
		data []byte // nil: remove
		perm fs.FileMode
	}
	var writes []write
	var conflicts []string
	for _, rel := range changed {
		base, bok := readFile(filepath.Join(c.base, rel))
		theirs, tok := readFile(filepath.Join(c.Dir, rel))
		ours, ook := readFile(filepath.Join(c.Root, rel))
		perm := fs.FileMode(0o644)
		if info, err := os.Stat(filepath.Join(c.Dir, rel)); err == nil {
			perm = info.Mode().Perm()
		}
		switch {
		case ook == bok && bytes.Equal(ours, base): // the parent did not touch it
			if tok {
				writes = append(writes, write{rel, theirs, perm})
			} else {
				writes = append(writes, write{rel: rel})
			}
		case ook && tok && bytes.Equal(ours, theirs): // the same change
		case ook && bok && tok:
			merged, ok, err := mergeFile(ctx, ours, base, theirs)
			if err != nil {
				return err
			}
			if !ok {
				conflicts = append(conflicts, rel)
				continue
			}
			writes = append(writes, write{rel, merged, perm})
		default: // added or removed on one side, changed on the other
			conflicts = append(conflicts, rel)
		}
	}
	if len(conflicts) > 0 {
		return fmt.Errorf("%w: %s", ErrConflict, strings.Join(conflicts, ", "))
	}
	for _, w := range writes {
		p := filepath.Join(c.Root, w.rel)
		if w.data == nil {
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("workspace: applying %s: %w", w.rel, err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("workspace: applying %s: %w", w.rel, err)
		}
		if err := os.WriteFile(p, w.data, w.perm); err != nil {
			return fmt.Errorf("workspace: applying %s: %w", w.rel, err)
		}
	}
	return nil
}

// changed lists the files that differ between the base and the copy.
func (c *Copy) changed() ([]string, error) {
	seen := map[string]bool{}
	for _, top := range []string{c.base, c.Dir} {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			if seen[rel] {
				return nil
			}
			a, aok := readFile(filepath.Join(c.base, rel))
			b, bok := readFile(filepath.Join(c.Dir, rel))
			seen[rel] = aok != bok || !bytes.Equal(a, b)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("workspace: listing the changes of %s: %w", c.Dir, err)
		}
	}
	var out []string
	for rel, diff := range seen {
		if diff {
			out = append(out, rel)
		}
	}
	sort.Strings(out)
	return out, nil
}

// readFile returns a regular file's bytes, and whether there is one.
func readFile(p string) ([]byte, bool) {
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxPatchBytes {
		return nil, false
	}
	b, err := os.ReadFile(p)
	return b, err == nil
}

// mergeFile merges theirs into ours from base with git merge-file, in
// memory; ok is false on a conflict.
func mergeFile(ctx context.Context, ours, base, theirs []byte) (merged []byte, ok bool, err error) {
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

// Remove removes the copy and its base.
func (c *Copy) Remove() error {
	if err := os.RemoveAll(filepath.Dir(c.Dir)); err != nil {
		return fmt.Errorf("workspace: removing %s: %w", c.Dir, err)
	}
	return nil
}
