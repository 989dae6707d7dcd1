package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
)

// The walker behind grep and glob: a parallel walk of a folder inside the
// root that honours .gitignore files, always skips .git folders, and never
// follows symbolic links (nor opens devices, sockets or pipes). Every folder
// is opened from its parent's handle (walk_linux.go, walk_other.go), so a
// file or folder is opened with a single confined step of its own name,
// however deep it lies; tree walks with the same handles (tree_dirs.go).

// walkDir is an open folder shared by the items listed in it; the last one
// to finish closes it. Its platform part (walk_linux.go, walk_other.go)
// opens entries with one confined step relative to the folder.
type walkDir struct {
	walkDirOS
	refs atomic.Int64
}

func (d *walkDir) release() {
	if d.refs.Add(-1) == 0 {
		d.close()
	}
}

// walkItem is a folder to list or a file to hand to the visitor.
type walkItem struct {
	parent  *walkDir           // folder holding the item (nil for the start folder)
	dir     *walkDir           // the start folder, already open (nil for the others)
	name    string             // name in parent
	rel     string             // slash-separated path from the CodeTools root
	isDir   bool               // a folder to list
	matcher *gitignore.Matcher // .gitignore rules of the folders above the item
}

// walkFile is what the visitor gets: a regular file, to open with
// dir.open(name) or stat with dir.modTime(name), a single confined step.
type walkFile struct {
	dir  *walkDir
	name string
	rel  string // slash-separated path from the CodeTools root
}

// walkQueue is a LIFO of pending items with a count of unfinished ones.
type walkQueue struct {
	ex      *exclusions // paths the host's rules leave out (nil: none)
	mu      sync.Mutex
	cond    *sync.Cond
	items   []walkItem
	pending int // items queued or being handled
}

func (q *walkQueue) push(items ...walkItem) {
	q.mu.Lock()
	q.items = append(q.items, items...)
	q.pending += len(items)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop waits for an item; ok is false when the walk is over.
func (q *walkQueue) pop() (it walkItem, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		if q.pending == 0 {
			return walkItem{}, false
		}
		q.cond.Wait()
	}
	it = q.items[len(q.items)-1]
	q.items[len(q.items)-1] = walkItem{}
	q.items = q.items[:len(q.items)-1]
	return it, true
}

func (q *walkQueue) done() {
	q.mu.Lock()
	q.pending--
	last := q.pending == 0
	q.mu.Unlock()
	if last {
		q.cond.Broadcast()
	}
}

// walkWorkers is how many goroutines walk and visit files.
func walkWorkers() int { return max(2, runtime.GOMAXPROCS(0)) }

// walk visits every regular file below folder start (a clean relative path
// from the root, "." for the root itself) that no .gitignore ignores and
// the host's rules do not leave out (bindExclusions: a folder left out is
// never opened; nothing is visited when start itself is left out), from
// walkWorkers goroutines at once; worker is the caller's index (0 to
// walkWorkers()-1), for per-goroutine buffers. The order is unspecified.
// Folders below start that cannot be read are skipped; start itself must
// be a folder that can be opened, or walk returns an error naming it. A
// panic in a walker goroutine (in visit too) stops the walk and is returned
// as a *llmtoolkit.PanicError. walk returns ctx's error when it was
// cancelled, after every worker has stopped.
func (c *CodeTools) walk(ctx context.Context, start string, visit func(worker int, f walkFile)) (err error) {
	relStart := ""
	if start != "." {
		relStart = path.Clean(filepath.ToSlash(start))
	}
	ex := boundExclusions(ctx)
	if ex.excluded(relStart) {
		return ctx.Err() // nothing below start may be shown
	}
	var matcher *gitignore.Matcher
	if relStart != "" {
		// The rules of the folders above start; start's own are read when
		// it is listed.
		if matcher, err = c.ignoreAbove(ctx, path.Dir(relStart)); err != nil {
			return err
		}
	}
	top, err := openWalkStart(c.conf, slashPath(start), start)
	if err != nil {
		return err
	}
	// A panicking worker cancels wctx: the others then drain the queue
	// without listing or visiting anything more.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	q := &walkQueue{ex: ex}
	q.cond = sync.NewCond(&q.mu)
	top.refs.Store(1)
	q.push(walkItem{dir: top, rel: relStart, isDir: true, matcher: matcher})

	n := walkWorkers()
	results := make([]<-chan error, n)
	for w := range n {
		results[w] = goGuarded("walk", func() error {
			for {
				it, ok := q.pop()
				if !ok {
					return nil
				}
				c.walkOne(wctx, stop, q, it, w, visit)
			}
		})
	}
	var panicErr error
	for _, r := range results {
		if err := <-r; err != nil && panicErr == nil {
			panicErr = err
		}
	}
	if panicErr != nil {
		return fmt.Errorf("walk of %s: %w", slashPath(start), panicErr)
	}
	return ctx.Err()
}

// walkOne lists or visits one item and marks it done, even when it panics
// (the panic then stops the walk and goes on to the worker's guard).
func (c *CodeTools) walkOne(ctx context.Context, stop func(), q *walkQueue, it walkItem, w int, visit func(int, walkFile)) {
	finished := false
	defer func() {
		if !finished {
			stop()
		}
		if it.parent != nil {
			it.parent.release()
		}
		if it.dir != nil {
			it.dir.release()
		}
		q.done()
	}()
	if ctx.Err() == nil {
		if it.isDir {
			c.listDir(q, it)
		} else {
			visit(w, walkFile{dir: it.parent, name: it.name, rel: it.rel})
		}
	}
	finished = true
}

// listDir opens folder it, reads its .gitignore and queues its entries.
func (c *CodeTools) listDir(q *walkQueue, it walkItem) {
	d := it.dir // the start folder, opened by walk
	if d == nil {
		var err error
		if d, err = it.parent.openSub(it.name); err != nil {
			return
		}
		d.refs.Store(1)
		defer d.release()
	}
	entries, _ := d.entries() // a partial listing is still worth walking

	m := it.matcher
	for _, e := range entries {
		if e.Name() == ".gitignore" {
			m = d.loadIgnore(it.rel, e, m)
			break
		}
	}
	items := make([]walkItem, 0, len(entries))
	for _, e := range entries {
		name := e.Name()
		t := e.Type()
		isDir := t.IsDir()
		if name == ".git" || (!isDir && !t.IsRegular()) { // symlinks, devices, pipes, sockets
			continue
		}
		rel := name
		if it.rel != "" {
			rel = it.rel + "/" + name
		}
		if m.Ignored(rel, isDir) || q.ex.excluded(rel) {
			continue
		}
		items = append(items, walkItem{parent: d, name: name, rel: rel, isDir: isDir, matcher: m})
	}
	d.refs.Add(int64(len(items)))
	q.push(items...)
}

// startPoint resolves a path argument to where a walk starts: the clean
// relative path and whether it is a folder. A missing path, or one that a
// symbolic link leads outside the root (an error wrapping [ErrOutsideRoot]),
// is an error that names the argument.
func (c *CodeTools) startPoint(ctx context.Context, arg, p string) (rel string, info fs.FileInfo, err error) {
	rel, err = c.canonical(ctx, arg, p, true)
	if err != nil {
		return "", nil, err
	}
	info, err = c.root.Stat(rel)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", nil, fmt.Errorf("%s %q does not exist: %w", arg, p, err)
		}
		if confine.IsEscape(err) {
			return "", nil, fmt.Errorf("%s %q is %w (through a symbolic link)", arg, p, ErrOutsideRoot)
		}
		return "", nil, fmt.Errorf("%s %q: %w", arg, p, err)
	}
	return rel, info, nil
}
