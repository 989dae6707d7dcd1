package codetools

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

// How the walks of tree, grep and glob read .gitignore files: a file of
// the tree, so as hostile as any other. An ignore file is read only when it
// is a regular file, checked on the opened descriptor; it is opened without
// blocking, so a named pipe cannot stall a walk; it is never read through a
// symbolic link, which git refuses too (since git 2.32), in every walk
// alike; and at most maxIgnoreFileBytes of it are read, so that a sparse or
// endless file costs no more than that. A file that is skipped, or read in
// part, is logged (logIgnoreProblem) and the walk goes on without it, as
// git goes on past an ignore file it cannot read.

// maxIgnoreFileBytes bounds what is read of one ignore file. Of a larger
// file, the whole lines of its first maxIgnoreFileBytes bytes are used.
const maxIgnoreFileBytes = 1 << 20

var (
	// errIgnoreLink: the ignore file is a symbolic link.
	errIgnoreLink = errors.New("is a symbolic link, which git does not read as an ignore file; skipped")
	// errIgnoreNotRegular: the ignore file is a folder, pipe, socket or device.
	errIgnoreNotRegular = errors.New("is not a regular file; skipped")
	// errIgnoreCut: the ignore file is larger than maxIgnoreFileBytes.
	errIgnoreCut = fmt.Errorf("is larger than %d MiB; only the whole lines of its first %d MiB are used",
		maxIgnoreFileBytes>>20, maxIgnoreFileBytes>>20)
)

// ignoreKindError refuses an ignore file of mode m (a link or a special
// file) without opening it; rel names it in the message.
func ignoreKindError(rel string, m fs.FileMode) error {
	if m&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s %w", rel, errIgnoreLink)
	}
	kind := "folder"
	if !m.IsDir() {
		kind = fsmode.Name(m)
	}
	return fmt.Errorf("%s (%s) %w", rel, kind, errIgnoreNotRegular)
}

// readIgnoreFileIn reads the ignore file name (relative to root) under the
// rules above; rel names it in errors. A missing file gives an error
// matching fs.ErrNotExist.
func readIgnoreFileIn(conf *confine.Root, root *os.Root, name, rel string) ([]byte, error) {
	// os.Root follows a final symbolic link (inside the root) whatever the
	// open flags say, so the link is refused on an lstat, and the file
	// opened must be the one lstat saw.
	lst, err := root.Lstat(name)
	if err != nil {
		return nil, err
	}
	if !lst.Mode().IsRegular() {
		return nil, ignoreKindError(rel, lst.Mode())
	}
	f, info, err := conf.OpenIn(root, rel, name, os.O_RDONLY, 0, confine.File)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if !os.SameFile(lst, info) {
		return nil, fmt.Errorf("%s was replaced while it was opened; skipped", rel)
	}
	return readIgnoreData(f, rel)
}

// readIgnoreData reads at most maxIgnoreFileBytes of an ignore file. For a
// larger file it returns the whole lines of its first maxIgnoreFileBytes
// bytes with an error matching errIgnoreCut (a pattern cut in two would
// match what its line does not).
func readIgnoreData(r io.Reader, rel string) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxIgnoreFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", rel, err)
	}
	if len(data) <= maxIgnoreFileBytes {
		return data, nil
	}
	data = data[:bytes.LastIndexByte(data[:maxIgnoreFileBytes], '\n')+1]
	return data, fmt.Errorf("%s %w", rel, errIgnoreCut)
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

// ignoreAbove returns the rules of the .gitignore files of the root and of
// every folder down to dir (root-relative, slash-separated), for a walk
// that starts below dir. It goes down one folder handle at a time, so the
// work is linear in dir's depth, and returns ctx's error when it ends
// first. A folder that cannot be opened ends the descent: the rules found
// above it apply.
func (c *CodeTools) ignoreAbove(ctx context.Context, dir string) (*gitignore.Matcher, error) {
	m, err := gitignore.LoadDir(c.readIgnoreFile, "", nil)
	logIgnoreProblem(err)
	dir = path.Clean(dir)
	if dir == "." || dir == "" {
		return m, nil
	}
	cur := c.root
	defer func() {
		if cur != c.root {
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
		if cur != c.root {
			cur.Close()
		}
		cur, done = sub, path.Join(done, name)
		here := cur
		m, err = gitignore.LoadDir(func(string) ([]byte, error) {
			return readIgnoreFileIn(c.conf, here, ".gitignore", path.Join(done, ".gitignore"))
		}, done, m)
		logIgnoreProblem(err)
	}
	return m, nil
}

// readIgnoreFile reads an ignore file named by its root-relative,
// slash-separated path.
func (c *CodeTools) readIgnoreFile(name string) ([]byte, error) {
	return readIgnoreFileIn(c.conf, c.root, filepath.FromSlash(name), name)
}

// loadIgnore returns m with the rules of the .gitignore of folder d (at
// rel, root-relative) on top; e is its entry in d's listing. A link or a
// special file is refused on the listing's type, without being opened.
func (d *walkDir) loadIgnore(rel string, e fs.DirEntry, m *gitignore.Matcher) *gitignore.Matcher {
	name := path.Join(rel, e.Name())
	var (
		data []byte
		err  error
	)
	if t := e.Type(); t.IsRegular() {
		data, err = d.readFile(e.Name(), name)
	} else {
		err = ignoreKindError(name, t)
	}
	logIgnoreProblem(err)
	return m.Child(rel, data)
}
