package gitignore

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
)

// Matcher decides whether paths are ignored by the .gitignore files of the
// folders a walk has gone through. It is an immutable stack: each level
// holds the patterns of one .gitignore file and points to the level of the
// folders above, so building a child never changes its parent and a Matcher
// is safe for concurrent use. A nil *Matcher ignores nothing and is a valid
// parent for [Matcher.Child], [Matcher.Push] and [LoadDir].
type Matcher struct {
	parent   *Matcher
	patterns []Pattern
}

// Push returns a Matcher with patterns stacked on top of m: they take
// precedence over m's (the last matching pattern wins, and these come
// last). It returns m itself when patterns is empty.
func (m *Matcher) Push(patterns ...Pattern) *Matcher {
	if len(patterns) == 0 {
		return m
	}
	return &Matcher{parent: m, patterns: patterns}
}

// Child returns the Matcher for folder dir (slash-separated, relative to the
// walk root, "" for the root), whose .gitignore holds content. The patterns
// apply to paths below dir only and override m's. When content holds no
// pattern (a folder without .gitignore passes nil), Child returns m itself,
// so a walker pays nothing for such folders.
func (m *Matcher) Child(dir string, content []byte) *Matcher {
	if len(content) == 0 {
		return m
	}
	return m.Push(ParsePatterns(dir, content)...)
}

// Ignored reports whether relPath (slash-separated, relative to the walk
// root, no leading "./" or trailing "/") is ignored; isDir tells whether it
// is a folder, for patterns ending in "/". The last matching pattern
// decides, deepest .gitignore last; with no match the path is not ignored.
//
// Only the path itself is tested, not the folders on its way: a walker that
// does not descend into ignored folders needs no more, and this is what
// makes "dir/" plus "!dir/file" leave dir/file unreachable, as in git. See
// [Matcher.IgnoredWithParents] for arbitrary paths. Ignored does not
// allocate.
func (m *Matcher) Ignored(relPath string, isDir bool) bool {
	if relPath == "" {
		return false
	}
	name := relPath[strings.LastIndexByte(relPath, '/')+1:]
	for l := m; l != nil; l = l.parent {
		for i := len(l.patterns) - 1; i >= 0; i-- {
			if p := &l.patterns[i]; p.match(relPath, name, isDir) {
				return !p.negate
			}
		}
	}
	return false
}

// IgnoredWithParents reports whether relPath is ignored either itself or
// because one of the folders on its way is ignored, which git never
// descends into (so "build/" plus "!build/keep" still ignores build/keep).
// m should hold the .gitignore files of every folder from the walk root to
// the path's parent, as a walker's Matcher for that parent does.
func (m *Matcher) IgnoredWithParents(relPath string, isDir bool) bool {
	if m == nil {
		return false
	}
	for i := 0; i < len(relPath); i++ {
		if relPath[i] == '/' && i > 0 && m.Ignored(relPath[:i], true) {
			return true
		}
	}
	return m.Ignored(relPath, isDir)
}

// LoadDir reads the .gitignore of folder dir (slash-separated, relative to
// the walk root; "" or "." for the root) with readFile and returns the
// Matcher for dir, parent's child. readFile takes a slash-separated name
// relative to the root. It decides what may be read: it should keep reads
// inside the root, refuse anything but a regular file (a named pipe would
// block the walk, a device never end it) and bound what it reads, as
// codetools' reader does; a bare (*os.Root).ReadFile does none of the last
// three. A missing .gitignore is not an error: LoadDir then returns parent.
// On any other error LoadDir returns parent too, with the error, so that a
// caller may report it and walk on, as git does. When readFile returns data
// along with its error (a file it read only in part), LoadDir uses the data
// and returns the error as well.
func LoadDir(readFile func(name string) ([]byte, error), dir string, parent *Matcher) (*Matcher, error) {
	dir = cleanBase(dir)
	data, err := readFile(path.Join(dir, ".gitignore"))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return parent, nil
		}
		return parent.Child(dir, data), fmt.Errorf("gitignore: %w", err)
	}
	return parent.Child(dir, data), nil
}

// LoadPath returns the Matcher for folder dir as a walk from the root would
// have built it: the .gitignore files of the root and of every folder down
// to dir, dir included. Use it to start a walk in a subfolder of the root.
// A .gitignore that cannot be read (other than a missing one) is skipped,
// as git skips it, and the ones below it still apply: LoadPath returns the
// Matcher of all the others, with the errors of the skipped ones joined.
func LoadPath(readFile func(name string) ([]byte, error), dir string) (*Matcher, error) {
	dir = cleanBase(dir)
	var errs []error
	m, err := LoadDir(readFile, "", nil)
	if err != nil {
		errs = append(errs, err)
	}
	if dir == "" {
		return m, errors.Join(errs...)
	}
	for i := 0; i <= len(dir); i++ {
		if i == len(dir) || dir[i] == '/' {
			if m, err = LoadDir(readFile, dir[:i], m); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return m, errors.Join(errs...)
}
