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

// CopyOptions configure [NewCopy].
type CopyOptions struct {
	Limits
	// Skip leaves out the paths it reports (slash-separated, relative to
	// the root; a folder with all it holds): the host's excluded paths.
	// They are not copied, not in the diff, and never written or removed
	// by Apply.
	Skip func(rel string) bool
	// CopyIgnored copies the files the root's .gitignore files ignore
	// too, and reports them in the diff; by default they are treated as
	// Skip's.
	CopyIgnored bool
}

// Copy is a copy of a folder without git made for one sub-agent: Dir is
// the sub-agent's, base the folder as it was copied (the common ancestor
// of the three-way merge of [Copy.Apply]). Files are cloned (FICLONE) where
// the file system shares blocks, else copied; symbolic links and special
// files are not copied. What the .gitignore files ignore (unless
// CopyOptions.CopyIgnored) and what CopyOptions.Skip names are left out
// of the copy, of its diff and of Apply, as the walkers of codetools
// leave them out: ignored files in the parent (node_modules, build
// outputs) are never touched, and those the sub-agent makes never come
// back.
type Copy struct {
	// Root is the parent's folder.
	Root string
	// Dir is the copy the sub-agent works in.
	Dir  string
	base string
	// Cloned counts the files that share their blocks with the root.
	Cloned int
	opt    CopyOptions
}

// OpenCopy returns the copy NewCopy made in dir of root, with the same
// options (a workspace found again after a restart); it fails when dir
// holds no copy.
func OpenCopy(root, dir string, opt CopyOptions) (*Copy, error) {
	c := &Copy{Root: root, Dir: filepath.Join(dir, "work"), base: filepath.Join(dir, "base"), opt: opt}
	for _, d := range []string{c.Dir, c.base} {
		if info, err := os.Lstat(d); err != nil || !info.IsDir() {
			return nil, fmt.Errorf("workspace: %s holds no copy: %w", dir, errors.Join(err, errors.New("not a folder")))
		}
	}
	return c, nil
}

// NewCopy copies root into dir/work (the sub-agent's) and dir/base (the
// ancestor), which must not exist, leaving out .git, what the .gitignore
// files ignore (unless opt.CopyIgnored) and opt.Skip's paths.
func NewCopy(ctx context.Context, root, dir string, opt CopyOptions) (*Copy, error) {
	c := &Copy{Root: root, Dir: filepath.Join(dir, "work"), base: filepath.Join(dir, "base"), opt: opt}
	lim := opt.Limits
	files, bytes := 0, int64(0)
	rules := c.rules(root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if rel != "." && c.leftOut(filepath.ToSlash(rel), d, rules) {
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

// rules returns the .gitignore rules of the folder top, nil when ignored
// files are copied.
func (c *Copy) rules(top string) *ignoreRules {
	if c.opt.CopyIgnored {
		return nil
	}
	return newIgnoreRules(top)
}

// leftOut reports whether rel (d its entry) is left out: .git, Skip's
// paths, and what any of rules ignores.
func (c *Copy) leftOut(rel string, d fs.DirEntry, rules ...*ignoreRules) bool {
	if d.Name() == ".git" || (c.opt.Skip != nil && c.opt.Skip(rel)) {
		return true
	}
	for _, r := range rules {
		if r.ignored(rel, d.IsDir()) {
			return true
		}
	}
	return false
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
	if cloneInto(out, in) {
		return true, out.Close()
	}
	_, err = io.Copy(out, in)
	return false, errors.Join(err, out.Close())
}

// Diff returns the sub-agent's changes as a unified, binary-safe patch
// (paths a/… and b/… relative to the folder), left-out paths excepted.
func (c *Copy) Diff(ctx context.Context) (string, error) {
	rels, err := c.changed(ctx)
	if err != nil {
		return "", err
	}
	var all strings.Builder
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		from, to := "base/"+rel, "work/"+rel
		if _, err := os.Lstat(filepath.Join(c.base, rel)); err != nil {
			from = os.DevNull
		}
		if _, err := os.Lstat(filepath.Join(c.Dir, rel)); err != nil {
			to = os.DevNull
		}
		args := append(append([]string{}, safeConfig...), "diff", "--no-index", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", "--", from, to)
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = filepath.Dir(c.Dir)
		cmd.Env = gitEnv()
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) { // 1: there are differences
			return "", fmt.Errorf("workspace: the diff of %s in %s: %w: %s", rel, c.Dir, err, strings.TrimSpace(errb.String()))
		}
		all.WriteString(relabel(out.String()))
		if all.Len() > maxPatchBytes {
			return "", fmt.Errorf("workspace: the diff of %s is more than %d bytes", c.Dir, maxPatchBytes)
		}
	}
	return all.String(), nil
}

// relabel names the files of one file's diff relative to the folder:
// a/base/X, b/work/X (and a/work/X, b/base/X of an added or removed file)
// become a/X and b/X, in the header lines only, never in the content.
func relabel(d string) string {
	lines := strings.SplitAfter(d, "\n")
	r := strings.NewReplacer("a/base/", "a/", "b/work/", "b/", "a/work/", "a/", "b/base/", "b/")
	for i, l := range lines {
		if strings.HasPrefix(l, "@@") {
			break // the content begins
		}
		if strings.HasPrefix(l, "diff --git ") || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "+++ ") {
			lines[i] = r.Replace(l)
		}
	}
	return strings.Join(lines, "")
}

// Apply merges the sub-agent's changes into the parent's folder, file by
// file three ways (git merge-file: the base, the parent's file now, the
// sub-agent's), whole or not at all: when any file conflicts, nothing is
// written and the error is a [*ConflictError] naming each file. check,
// when not nil, is asked about every file before any is written.
func (c *Copy) Apply(ctx context.Context, check CheckFunc) error {
	rels, err := c.changed(ctx)
	if err != nil {
		return err
	}
	changes := make([]change, 0, len(rels))
	for _, rel := range rels {
		ch := change{rel: rel}
		rel := filepath.FromSlash(rel)
		for _, p := range []string{filepath.Join(c.base, rel), filepath.Join(c.Dir, rel)} {
			if info, err := os.Lstat(p); err == nil && (!info.Mode().IsRegular() || info.Size() > maxPatchBytes) {
				ch.unsupported = fmt.Sprintf("not a regular file of at most %d bytes: not applied", maxPatchBytes)
			}
		}
		if b, ok := readFile(filepath.Join(c.base, rel)); ok {
			ch.base = b
		}
		if b, ok := readFile(filepath.Join(c.Dir, rel)); ok {
			ch.theirs = b
			ch.perm = 0o644
			if info, err := os.Lstat(filepath.Join(c.Dir, rel)); err == nil {
				ch.perm = info.Mode().Perm()
			}
		}
		changes = append(changes, ch)
	}
	return merge(ctx, c.Root, changes, check)
}

// changed lists the files that differ between the base and the copy,
// leaving out what [Copy.leftOut] does, under the .gitignore rules of
// either side (a sub-agent that ignores its build folder is heard).
func (c *Copy) changed(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	rules := []*ignoreRules{c.rules(c.base), c.rules(c.Dir)}
	if rules[0] == nil {
		rules = nil
	}
	for _, top := range []string{c.base, c.Dir} {
		err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			rel, _ := filepath.Rel(top, p)
			if rel == "." {
				return nil
			}
			if c.leftOut(filepath.ToSlash(rel), d, rules...) {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() || seen[filepath.ToSlash(rel)] {
				return nil
			}
			seen[filepath.ToSlash(rel)] = !sameRegular(filepath.Join(c.base, rel), filepath.Join(c.Dir, rel))
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

// sameRegular reports whether a and b are both regular files with the
// same bytes, or both absent; compared in blocks, whatever their size.
func sameRegular(a, b string) bool {
	ia, erra := os.Lstat(a)
	ib, errb := os.Lstat(b)
	if erra != nil || errb != nil {
		return erra != nil && errb != nil
	}
	if !ia.Mode().IsRegular() || !ib.Mode().IsRegular() || ia.Size() != ib.Size() || ia.Mode().Perm() != ib.Mode().Perm() {
		return false
	}
	fa, err := os.Open(a)
	if err != nil {
		return false
	}
	defer fa.Close()
	fb, err := os.Open(b)
	if err != nil {
		return false
	}
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if na != nb || !bytes.Equal(ba[:na], bb[:nb]) {
			return false
		}
		if ea != nil || eb != nil {
			return ea == eb || (errors.Is(ea, io.EOF) || errors.Is(ea, io.ErrUnexpectedEOF)) && (errors.Is(eb, io.EOF) || errors.Is(eb, io.ErrUnexpectedEOF))
		}
	}
}

// readFile returns a regular file's bytes, and whether there is one.
func readFile(p string) ([]byte, bool) {
	info, err := os.Lstat(p)
	if err != nil || !info.Mode().IsRegular() || info.Size() > maxPatchBytes {
		return nil, false
	}
	b, err := os.ReadFile(p)
	if b == nil {
		b = []byte{}
	}
	return b, err == nil
}

// Remove removes the copy and its base.
func (c *Copy) Remove() error {
	if err := os.RemoveAll(filepath.Dir(c.Dir)); err != nil {
		return fmt.Errorf("workspace: removing %s: %w", c.Dir, err)
	}
	return nil
}
