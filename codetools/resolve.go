package codetools

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds the symbolic links followed while resolving a path.
const maxLinkHops = 40

// resolve follows the symbolic links of rel (a path from [CodeTools.rel]),
// one component at a time, and returns the path inside the root that they
// lead to, so that an atomic write replaces the file a link points to
// rather than the link, and so that two names of one file share one lock.
// A link that leads outside the root is an error wrapping [ErrOutsideRoot].
// The part of the path that does not exist yet is kept as it is. Every
// later access still goes through os.Root, which checks again: resolve is
// a convenience, not the guard.
func (c *CodeTools) resolve(arg, p, rel string) (string, error) {
	todo := splitPath(rel)
	var cur []string
	hops := 0
	missing := false
	for len(todo) > 0 {
		comp := todo[0]
		todo = todo[1:]
		switch comp {
		case "", ".":
			continue
		case "..":
			if len(cur) == 0 {
				return "", fmt.Errorf("%s %q leads outside the working directory through a symbolic link: %w", arg, p, ErrOutsideRoot)
			}
			cur = cur[:len(cur)-1]
			continue
		}
		cand := filepath.Join(append(cur[:len(cur):len(cur)], comp)...)
		if missing {
			cur = append(cur, comp)
			continue
		}
		info, err := c.root.Lstat(cand)
		if err != nil || info.Mode()&fs.ModeSymlink == 0 {
			missing = err != nil
			cur = append(cur, comp)
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", fmt.Errorf("%s %q: too many levels of symbolic links", arg, p)
		}
		target, err := c.root.Readlink(cand)
		if err != nil {
			return "", fmt.Errorf("%s %q: read symbolic link %q: %w", arg, p, filepath.ToSlash(cand), err)
		}
		if filepath.IsAbs(target) {
			r, err := filepath.Rel(c.dir, filepath.Clean(target))
			if err != nil || r == ".." || strings.HasPrefix(r, ".."+string(filepath.Separator)) {
				return "", fmt.Errorf("%s %q leads outside the working directory through symbolic link %q: %w", arg, p, filepath.ToSlash(cand), ErrOutsideRoot)
			}
			cur = cur[:0]
			target = r
		}
		todo = append(splitPath(target), todo...)
	}
	if len(cur) == 0 {
		return ".", nil
	}
	return filepath.Join(cur...), nil
}

func splitPath(p string) []string {
	return strings.Split(filepath.ToSlash(p), "/")
}
