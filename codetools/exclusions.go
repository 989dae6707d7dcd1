package codetools

import (
	"context"
	"fmt"
	"path"
	"strings"
	"sync/atomic"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// exclusions are the paths a permission layer asked the recursive tools
// (grep, glob, tree, list_directory) to leave out, with
// [llmtoolkit.WithExcludedPaths]: doublestar globs on canonical,
// root-relative paths, as the deny rules that set them match a direct call.
// A folder that matches is left out with all it holds; a walk never opens
// it. The answer names the globs that left something out.
type exclusions struct {
	globs []string
	hit   []atomic.Bool // hit[i]: globs[i] left something out
}

type exclusionsKey struct{}

// bindExclusions reads the excluded paths of ctx; it returns nil (no
// exclusions) when there are none, else the exclusions and a context that
// hands them to the walk.
func bindExclusions(ctx context.Context) (context.Context, *exclusions) {
	globs := llmtoolkit.ExcludedPathsFrom(ctx)
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
	used := e.used()
	if len(used) == 0 {
		return ""
	}
	return fmt.Sprintf("\n\n[Left out, as the host's permission rules deny them: paths matching %s.]", strings.Join(used, ", "))
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
