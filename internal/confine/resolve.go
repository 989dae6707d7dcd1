package confine

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// maxLinkHops bounds the symbolic links followed while resolving a path.
const maxLinkHops = 40

// keptHandles bounds the folder handles Resolve keeps open at once: the
// folders of the last levels it went down, so that a ".." of a link
// target steps back without a new open from the root.
const keptHandles = 16

// Resolve follows the symbolic links of rel (a path from [Root.Rel]), one
// component at a time, and returns the path inside the root that they lead
// to, so that a tool opens, and a permission check sees, the file a link
// points to, and so that two names of one file share one lock. A link that
// leads outside the root is an error wrapping r.Outside; arg and p name
// the argument in errors. The part of the path that does not exist yet is
// kept as it is. Every later access still goes through os.Root, which
// checks again.
//
// Each component is looked up in its folder's handle (one step, however
// deep the folder lies), so the work is linear in the depth of the path;
// ctx is checked as it goes.
func (r *Root) Resolve(ctx context.Context, arg, p, rel string) (string, error) {
	w := resolveWalk{r: r}
	defer w.closeAll()
	todo := splitPath(rel)
	slices.Reverse(todo) // a stack: the next component is the last
	hops := 0
	missing := false
	for n := 0; len(todo) > 0; n++ {
		if n%64 == 63 {
			if err := ctx.Err(); err != nil {
				return "", fmt.Errorf("%s %q: resolving the path: %w", arg, p, err)
			}
		}
		comp := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(w.cur) == 0 {
				return "", fmt.Errorf("%s %q leads outside the working directory through a symbolic link: %w", arg, p, r.Outside)
			}
			w.pop()
			continue
		}
		if missing {
			w.push(comp, nil)
			continue
		}
		dir, err := w.top()
		if err != nil {
			missing = true
			w.push(comp, nil)
			continue
		}
		info, err := dir.Lstat(comp)
		if err != nil {
			missing = true
			w.push(comp, nil)
			continue
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			var sub *os.Root
			if len(todo) > 0 {
				if info.IsDir() {
					sub, _ = dir.OpenRoot(comp) // nil: reopened from the root if needed
				} else {
					missing = true // a file with components below it
				}
			}
			w.push(comp, sub)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s %q: too many levels of symbolic links", arg, p)
		}
		target, err := dir.Readlink(comp)
		if err != nil {
			return "", fmt.Errorf("%s %q: read symbolic link %q: %w", arg, p, filepath.ToSlash(filepath.Join(w.path(), comp)), err)
		}
		if filepath.IsAbs(target) {
			rel, ok := r.inside(target)
			if !ok {
				return "", fmt.Errorf("%s %q leads outside the working directory through symbolic link %q: %w",
					arg, p, filepath.ToSlash(filepath.Join(w.path(), comp)), r.Outside)
			}
			w.reset()
			target = rel
		}
		parts := splitPath(target)
		slices.Reverse(parts)
		todo = append(todo, parts...)
	}
	return w.path(), nil
}

// resolveWalk is where Resolve stands: the components of the folder it is
// in, and open handles of the last few of them (nil where not kept).
type resolveWalk struct {
	r       *Root
	cur     []string
	handles []*os.Root
}

// top returns the handle of the folder cur names, the root's when cur is
// empty, reopening it from the root when it was not kept.
func (w *resolveWalk) top() (*os.Root, error) {
	n := len(w.cur)
	if n == 0 {
		return w.r.FS, nil
	}
	if h := w.handles[n-1]; h != nil {
		return h, nil
	}
	h, err := w.r.FS.OpenRoot(filepath.Join(w.cur...))
	if err != nil {
		return nil, err
	}
	w.handles[n-1] = h
	return h, nil
}

// push goes down into comp; h is its handle, or nil.
func (w *resolveWalk) push(comp string, h *os.Root) {
	w.cur = append(w.cur, comp)
	w.handles = append(w.handles, h)
	if i := len(w.handles) - 1 - keptHandles; i >= 0 && w.handles[i] != nil {
		w.handles[i].Close()
		w.handles[i] = nil
	}
}

// pop goes up one level.
func (w *resolveWalk) pop() {
	n := len(w.cur) - 1
	if h := w.handles[n]; h != nil {
		h.Close()
	}
	w.cur, w.handles = w.cur[:n], w.handles[:n]
}

// reset goes back to the root.
func (w *resolveWalk) reset() {
	for len(w.cur) > 0 {
		w.pop()
	}
}

func (w *resolveWalk) closeAll() { w.reset() }

// path is the root-relative path of where the walk stands, "." at the root.
func (w *resolveWalk) path() string {
	if len(w.cur) == 0 {
		return "."
	}
	return filepath.Join(w.cur...)
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}
