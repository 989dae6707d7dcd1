package codetools

// The servers' watch of new names (WithLanguageServers): bash's and the
// jobs' watch (internal/snapshot) skips what .gitignore ignores, so a
// file a command makes in an ignored folder would reach a server's view
// unchecked. This watch lists every folder of the tree, ignored ones
// included, reading again only those whose stat moved, and hands the new
// names to serversSeeNew before anything is told to a server.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path"
	"path/filepath"
	"sync"
)

// maxServerWatchEntries bounds the names the servers' watch keeps; past
// it every call that reaches a server restarts them (their views are made
// afresh), and it is logged once.
const maxServerWatchEntries = 1_000_000

// errServerWatchTooLarge: the tree holds more names than the watch keeps.
var errServerWatchTooLarge = errors.New("the tree holds too many names to watch for the language servers")

// serverWatch is the tree's folders as last listed.
type serverWatch struct {
	mu       sync.Mutex
	dirs     map[string]*watchedDir // by root-relative, slash-separated path ("." the root); nil before the first scan
	tooLarge sync.Once
}

// watchedDir is one folder as last listed: its stat, and its entries
// (true for a folder).
type watchedDir struct {
	info  os.FileInfo
	names map[string]bool
}

// serversSeeTree lists what is new in the tree since the last look,
// ignored folders included, and restarts the servers when one of the new
// paths is hidden from them and not covered yet (serversSeeNew). Nothing
// runs while nothing is hidden.
func (c *CodeTools) serversSeeTree(ctx context.Context) {
	if c.lsp == nil || c.serverHides() == nil {
		return
	}
	added, err := c.srvWatch.scan(ctx, c.dir)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		c.srvWatch.tooLarge.Do(func() {
			c.srvSbx.logger.Warn("codetools: the language servers are restarted at every call that reaches them: cannot tell the tree's new files", slog.String("reason", err.Error()))
		})
		c.lsp.Restart() // their views are made afresh
		return
	}
	c.serversSeeNew(added)
}

// baseline lists the tree once, when it has not been (a server's start,
// before its view is made: what appears after is new).
func (w *serverWatch) baseline(ctx context.Context, root string) {
	w.mu.Lock()
	started := w.dirs != nil
	w.mu.Unlock()
	if !started {
		_, _ = w.scan(ctx, root)
	}
}

// scan lists the folders whose stat moved since the last scan and returns
// the paths new since then (each entry of a new folder too); the first
// scan returns none.
func (w *serverWatch) scan(ctx context.Context, root string) ([]string, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	first := w.dirs == nil
	next := make(map[string]*watchedDir, len(w.dirs))
	var added []string
	entries := 0
	var walk func(rel string) error
	walk = func(rel string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		info, err := os.Lstat(abs)
		if err != nil || !info.IsDir() {
			return nil // gone, or replaced by a file meanwhile: the next scan sees it
		}
		was := w.dirs[rel]
		cur := was
		if was == nil || !os.SameFile(was.info, info) || !was.info.ModTime().Equal(info.ModTime()) {
			des, err := os.ReadDir(abs)
			if err != nil && len(des) == 0 {
				return nil // unreadable here: unreadable in the sandbox too
			}
			cur = &watchedDir{info: info, names: make(map[string]bool, len(des))}
			for _, d := range des {
				cur.names[d.Name()] = d.Type().IsDir()
			}
		}
		next[rel] = cur
		for name, isDir := range cur.names {
			if entries++; entries > maxServerWatchEntries {
				return fmt.Errorf("%w (more than %d)", errServerWatchTooLarge, maxServerWatchEntries)
			}
			child := path.Join(rel, name)
			if !first && (was == nil || !hasName(was, name)) {
				added = append(added, child)
			}
			if isDir {
				if err := walk(child); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk("."); err != nil {
		return nil, err // the last listing stays the one compared
	}
	w.dirs = next
	return added, nil
}

func hasName(d *watchedDir, name string) bool {
	_, ok := d.names[name]
	return ok
}
