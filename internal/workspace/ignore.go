package workspace

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
)

// ignoreRules are the .gitignore rules of one folder tree, read as
// codetools' walkers read them (a link or a special file is not an
// ignore file; the whole lines of the first maxIgnoreBytes of each), one folder at a
// time and once. A nil *ignoreRules ignores nothing.
type ignoreRules struct {
	top string
	mu  sync.Mutex
	by  map[string]*gitignore.Matcher // by folder, "" for the top
}

func newIgnoreRules(top string) *ignoreRules {
	return &ignoreRules{top: top, by: map[string]*gitignore.Matcher{}}
}

// ignored reports whether rel (slash-separated, relative to the top) is
// ignored, itself or through a folder on its way.
func (r *ignoreRules) ignored(rel string, isDir bool) bool {
	if r == nil {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	return r.matcher(dir).IgnoredWithParents(rel, isDir)
}

// matcher returns the rules in force in folder dir.
func (r *ignoreRules) matcher(dir string) *gitignore.Matcher {
	if m, ok := r.by[dir]; ok {
		return m
	}
	var parent *gitignore.Matcher
	if dir != "" {
		up := path.Dir(dir)
		if up == "." {
			up = ""
		}
		parent = r.matcher(up)
	}
	m, _ := gitignore.LoadDir(r.read, dir, parent) // one that cannot be read is skipped, as git skips it
	r.by[dir] = m
	return m
}

// read reads one ignore file under the top: a regular file, bounded.
func (r *ignoreRules) read(name string) ([]byte, error) {
	p := filepath.Join(r.top, filepath.FromSlash(name))
	info, err := os.Lstat(p)
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; skipped", name)
	}
	f, err := os.OpenFile(p, os.O_RDONLY|unix.O_NONBLOCK|unix.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if info, err := f.Stat(); err != nil || !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file; skipped", name)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxIgnoreBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxIgnoreBytes {
		b = b[:bytes.LastIndexByte(b[:maxIgnoreBytes], '\n')+1] // whole lines only
	}
	return b, nil
}

// maxIgnoreBytes bounds what is read of one ignore file (as
// internal/walk's MaxIgnoreFileBytes).
const maxIgnoreBytes = 1 << 20
