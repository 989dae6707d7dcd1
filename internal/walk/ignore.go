package walk

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
)

// MaxIgnoreFileBytes bounds what is read of one ignore file. Of a larger
// file, the whole lines of its first MaxIgnoreFileBytes bytes are used.
const MaxIgnoreFileBytes = 1 << 20

var (
	// ErrIgnoreLink is wrapped by the error for an ignore file that is a
	// symbolic link.
	ErrIgnoreLink = errors.New("is a symbolic link, which git does not read as an ignore file; skipped")
	// ErrIgnoreNotRegular is wrapped by the error for an ignore file that
	// is a folder, pipe, socket or device.
	ErrIgnoreNotRegular = errors.New("is not a regular file; skipped")
	// ErrIgnoreCut is wrapped by the error for an ignore file larger than
	// MaxIgnoreFileBytes, of which only a prefix was read.
	ErrIgnoreCut = fmt.Errorf("is larger than %d MiB; only the whole lines of its first %d MiB are used",
		MaxIgnoreFileBytes>>20, MaxIgnoreFileBytes>>20)
)

// ignoreKindError refuses an ignore file of mode m (a link or a special
// file) without opening it; rel names it in the message.
func ignoreKindError(rel string, m fs.FileMode) error {
	if m&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", rel, ErrIgnoreLink)
	}
	kind := "folder"
	if !m.IsDir() {
		kind = fsmode.Name(m)
	}
	return fmt.Errorf("%s (%s) %w", rel, kind, ErrIgnoreNotRegular)
}

// readIgnoreFileIn reads the ignore file name (relative to dir, r.FS or a
// folder below it) under the rules of the package doc; rel names it in
// errors. A missing file gives an error matching fs.ErrNotExist.
func readIgnoreFileIn(r *confine.Root, dir *os.Root, name, rel string) ([]byte, error) {
	// os.Root follows a final symbolic link (inside the root) whatever the
	// open flags say, so the link is refused on an lstat, and the file
	// opened must be the one lstat saw.
	lst, err := dir.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !lst.Mode().IsRegular() {
		return nil, ignoreKindError(rel, lst.Mode())
	}
	f, info, err := r.OpenIn(dir, rel, name, os.O_RDONLY, 0, confine.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !os.SameFile(lst, info) {
		return nil, fmt.Errorf("%s was replaced while it was opened; skipped", rel)
	}
	return readIgnoreData(f, rel)
}

// readIgnoreData reads at most MaxIgnoreFileBytes of an ignore file. For a
// larger file it returns the whole lines of its first MaxIgnoreFileBytes
// bytes with an error matching ErrIgnoreCut (a pattern cut in two would
// match what its line does not).
func readIgnoreData(r io.Reader, rel string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxIgnoreFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if len(data) <= MaxIgnoreFileBytes {
		return data, nil
	}
	data = data[:bytes.LastIndexByte(data[:MaxIgnoreFileBytes], '\n')+1]
	return data, fmt.Errorf("%s %w", rel, ErrIgnoreCut)
}

// logIgnoreProblem reports ignore files that were skipped or read in part,
// one warning each (err may join several); nil is ignored. The walk itself
// goes on.
func logIgnoreProblem(err error) {
	if err == nil {
		return
	}
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			logIgnoreProblem(e)
		}
		return
	}
	slog.Warn("codetools: an ignore file was skipped or read in part; the walk goes on",
		slog.String("error", err.Error()))
}

// IgnoreAbove returns the rules of the .gitignore files of the root and of
// every folder down to dir (root-relative, slash-separated), for a walk
// that starts below dir. It goes down one folder handle at a time, so the
// work is linear in dir's depth, and returns ctx's error when it ends
// first. A folder that cannot be opened ends the descent: the rules found
// above it apply.
func IgnoreAbove(ctx context.Context, r *confine.Root, dir string) (*gitignore.Matcher, error) {
	m, err := gitignore.LoadDir(rootReader(r), "", nil)
	logIgnoreProblem(err)
	dir = path.Clean(dir)
	if dir == "." || dir == "" {
		return m, nil
	}
	cur := r.FS
	defer func() {
		if cur != r.FS {
			cur.Close()
		}
	}()
	done := ""
	for i, name := range strings.Split(dir, "/") {
		if i%64 == 63 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		sub, err := cur.OpenRoot(name)
		if err != nil {
			slog.Warn("codetools: a folder above a walk could not be opened to read its .gitignore; the rules below it are not read",
				slog.String("folder", path.Join(done, name)), slog.String("error", err.Error()))
			return m, nil
		}
		if cur != r.FS {
			cur.Close()
		}
		cur, done = sub, path.Join(done, name)
		here := cur
		m, err = gitignore.LoadDir(func(string) ([]byte, error) {
			return readIgnoreFileIn(r, here, ".gitignore", path.Join(done, ".gitignore"))
		}, done, m)
		logIgnoreProblem(err)
	}
	return m, nil
}

// rootReader reads an ignore file named by its root-relative,
// slash-separated path.
func rootReader(r *confine.Root) func(name string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		return readIgnoreFileIn(r, r.FS, filepath.FromSlash(name), name)
	}
}

// loadIgnore returns m with the rules of the .gitignore of folder d (at
// rel, root-relative) on top; e is its entry in d's listing. A link or a
// special file is refused on the listing's type, without being opened.
func (d *Dir) loadIgnore(rel string, e fs.DirEntry, m *gitignore.Matcher) *gitignore.Matcher {
	name := path.Join(rel, e.Name())
	var (
		data []byte
		err  error
	)
	if t := e.Type(); t.IsRegular() {
		data, err = d.ReadIgnore(e.Name(), name)
	} else {
		err = ignoreKindError(name, t)
	}
	logIgnoreProblem(err)
	return m.Child(rel, data)
}

// Rules are the .gitignore rules in force in one folder of a depth-first
// walk (tree's). Paths are relative to the root, so the .gitignore files
// of the folders above the walk's top apply too.
type Rules struct {
	m *gitignore.Matcher
}

// RulesAt returns the rules in force in the folder rel: the .gitignore
// files of the root and of every folder down to rel. A .gitignore that
// cannot be read (a link, a pipe, a folder) is skipped with a logged
// event, and those below it still apply. It returns ctx's error when ctx
// ends first.
func RulesAt(ctx context.Context, r *confine.Root, rel string) (*Rules, error) {
	m, err := IgnoreAbove(ctx, r, ignorePath(rel))
	if err != nil {
		return nil, err
	}
	return &Rules{m: m}, nil
}

// Empty reports whether no rule is in force: nothing is ignored.
func (s *Rules) Empty() bool { return s.m == nil }

// Ignored reports whether the entry at rel (relative to the root) is
// skipped.
func (s *Rules) Ignored(rel string, isDir bool) bool {
	return s.m.Ignored(ignorePath(rel), isDir)
}

// Child returns the rules in force in the folder rel, below s's: s with
// rel's own .gitignore on top (one that cannot be read is logged and
// skipped).
func (s *Rules) Child(r *confine.Root, rel string) *Rules {
	m, err := gitignore.LoadDir(rootReader(r), ignorePath(rel), s.m)
	logIgnoreProblem(err)
	if m == s.m {
		return s
	}
	return &Rules{m: m}
}

// ignorePath turns a root-relative path into the matcher's form.
func ignorePath(rel string) string {
	if rel == "." {
		return ""
	}
	return filepath.ToSlash(rel)
}

// IgnoreData returns the rules of an ignore file another walker opened
// itself (internal/snapshot's): r reads it and m is its type, checked on
// the opened descriptor. A file that is not regular gives no rules, a
// larger one the whole lines of its first [MaxIgnoreFileBytes], each
// logged as this package's walks log them; rel names it.
func IgnoreData(r io.Reader, m fs.FileMode, rel string) []byte {
	if !m.IsRegular() {
		logIgnoreProblem(ignoreKindError(rel, m))
		return nil
	}
	data, err := readIgnoreData(r, rel)
	logIgnoreProblem(err)
	return data
}
