package codetools

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// exclusions are the paths a permission layer asked the recursive tools
// (grep, glob, tree, list_directory) to leave out, with
// [llmtoolkit.Scope].ExcludedPaths: doublestar globs on canonical,
// root-relative paths, as the deny rules that set them match a direct call.
// A folder that matches is left out with all it holds; a walk never opens
// it. The answer names the globs that left something out.
type exclusions struct {
	globs  []string
	hit    []atomic.Bool // hit[i]: globs[i] left something out
	linked atomic.Int64  // files left out for having other names (checkOneName)
}

type exclusionsKey struct{}

// bindExclusions reads the excluded paths of ctx; it returns nil (no
// exclusions) when there are none, else the exclusions and a context that
// hands them to the walk.
func bindExclusions(ctx context.Context) (context.Context, *exclusions) {
	globs := llmtoolkit.ScopeFrom(ctx).ExcludedPaths
	if len(globs) == 0 {
		return ctx, nil
	}
	ex := &exclusions{globs: globs, hit: make([]atomic.Bool, len(globs))}
	return context.WithValue(ctx, exclusionsKey{}, ex), ex
}

// boundExclusions returns the exclusions bindExclusions put on ctx, or nil.
func boundExclusions(ctx context.Context) *exclusions {
	ex, _ := ctx.Value(exclusionsKey{}).(*exclusions)
	return ex
}

// excluded reports whether rel (root-relative; "" or "." for the root) is
// left out, and notes which glob left it out. A nil e excludes nothing.
func (e *exclusions) excluded(rel string) bool {
	if e == nil {
		return false
	}
	rel = path.Clean(strings.ReplaceAll(rel, `\`, "/"))
	for i, g := range e.globs {
		if ok, _ := doublestar.Match(g, rel); ok {
			e.hit[i].Store(true)
			return true
		}
	}
	return false
}

// refuseStart returns an error when the folder or file a walk starts at
// (p as given, rel canonical) is itself left out.
func (e *exclusions) refuseStart(arg, p, rel string) error {
	if !e.excluded(rel) {
		return nil
	}
	return fmt.Errorf("%s %q is left out by the host's permission rules (%s); choose another path", arg, p, strings.Join(e.used(), ", "))
}

// used lists the globs that left something out.
func (e *exclusions) used() []string {
	if e == nil {
		return nil
	}
	var out []string
	for i, g := range e.globs {
		if e.hit[i].Load() {
			out = append(out, g)
		}
	}
	return out
}

// note is the line an answer ends with when something was left out: which
// globs left it out. Empty otherwise.
func (e *exclusions) note() string {
	var out string
	if used := e.used(); len(used) > 0 {
		out = fmt.Sprintf("\n\n[Left out, as the host's permission rules deny them: paths matching %s.]", strings.Join(used, ", "))
	}
	if e != nil {
		if n := e.linked.Load(); n > 0 {
			out += fmt.Sprintf("\n\n[Left out: %d file(s) with more than one name (hard links), whose other names the host's permission rules cannot check.]", n)
		}
	}
	return out
}

// openWalked opens the walked file f for reading its contents: with the
// host's rules in force (e not nil), a file with more than one name is
// left out (checkOneName's rule, on the opened descriptor) and counted in
// the note.
func (e *exclusions) openWalked(f walk.File) (io.ReadCloser, error) {
	if e == nil {
		return f.Dir.Open(f.Name)
	}
	r, err := f.Dir.OpenOneName(f.Name)
	if errors.Is(err, confine.ErrLinked) {
		e.linked.Add(1)
	}
	return r, err
}

// checkOneName is the one check of every tool that reads or writes a
// file's contents, made on the opened descriptor's facts (fstat, never a
// second lookup): while the host's deny rules cover the call's paths
// (llmtoolkit.Scope.ExcludedPaths, as agent's guard sets them), a regular
// file with more than one name (hard links) is refused, since the rules
// see one of its names only and another may be in a denied folder, or
// outside the root. Without rules, nothing is refused.
func checkOneName(ctx context.Context, p string, info fs.FileInfo) error {
	if len(llmtoolkit.ScopeFrom(ctx).ExcludedPaths) == 0 {
		return nil
	}
	return confine.CheckLinksOf(p, info)
}

// openContents opens the file rel (p names it) to read its contents:
// [confine.Root.Open], then checkOneName on the opened descriptor.
func (c *CodeTools) openContents(ctx context.Context, p, rel string) (*os.File, fs.FileInfo, error) {
	f, info, err := c.conf.Open(p, rel, confine.File)
	if err != nil {
		return nil, nil, err
	}
	if err := checkOneName(ctx, p, info); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// walk walks the folder start with internal/walk (see [walk.Walker.Walk]),
// leaving out what the host's rules exclude (bindExclusions: a folder left
// out is never opened), its goroutines guarded by goGuarded: a panic, in
// visit too, comes back as a *llmtoolkit.PanicError.
func (c *CodeTools) walk(ctx context.Context, start string, visit func(worker int, f walk.File)) error {
	w := walk.Walker{Root: c.conf, Go: goGuarded}
	if ex := boundExclusions(ctx); ex != nil {
		w.Excluded = ex.excluded
	}
	return w.Walk(ctx, start, visit)
}
