package walk

import (
	"context"
	"fmt"
	"path"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
)

// Dir is an open folder. In a [Walker.Walk] it is shared by the items
// listed in it, and the last one to finish closes it. Its platform part
// (dir_linux.go, dir_other.go) opens entries with one confined step
// relative to the folder.
type Dir struct {
	dirOS
	refs atomic.Int64
}

func (d *Dir) release() {
	if d.refs.Add(-1) == 0 {
		d.Close()
	}
}

// File is what a visitor gets: a regular file, to open with
// f.Dir.Open(f.Name) or stat with f.Dir.ModTime(f.Name), a single confined
// step. The Dir is valid until the visitor returns.
type File struct {
	Dir  *Dir
	Name string // name in Dir
	Rel  string // slash-separated path from the root
}

// Walker walks folders of a root.
type Walker struct {
	// Root is the root the walk is confined to.
	Root *confine.Root
	// Go (required) runs fn in a new goroutine and returns a channel
	// that receives fn's error once; a panic in fn must come back as an
	// error, not end the process (codetools passes its goroutine guard).
	// what names the goroutine.
	Go func(what string, fn func() error) <-chan error
	// Excluded reports the root-relative paths that the host's rules leave
	// out; a folder left out is never opened. Nil excludes nothing.
	Excluded func(rel string) bool
}

// item is a folder to list or a file to hand to the visitor.
type item struct {
	parent  *Dir               // folder holding the item (nil for the start folder)
	dir     *Dir               // the start folder, already open (nil for the others)
	name    string             // name in parent
	rel     string             // slash-separated path from the root
	isDir   bool               // a folder to list
	matcher *gitignore.Matcher // .gitignore rules of the folders above the item
}

// queue is a LIFO of pending items with a count of unfinished ones.
type queue struct {
	excluded func(string) bool
	mu       sync.Mutex
	cond     *sync.Cond
	items    []item
	pending  int // items queued or being handled
}

func (q *queue) push(items ...item) {
	q.mu.Lock()
	q.items = append(q.items, items...)
	q.pending += len(items)
	q.mu.Unlock()
	q.cond.Broadcast()
}

// pop waits for an item; ok is false when the walk is over.
func (q *queue) pop() (it item, ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 {
		if q.pending == 0 {
			return item{}, false
		}
		q.cond.Wait()
	}
	it = q.items[len(q.items)-1]
	q.items[len(q.items)-1] = item{}
	q.items = q.items[:len(q.items)-1]
	return it, true
}

func (q *queue) done() {
	q.mu.Lock()
	q.pending--
	last := q.pending == 0
	q.mu.Unlock()
	if last {
		q.cond.Broadcast()
	}
}

// yieldEvery is how many items a walker handles between two yields to the
// scheduler. A walker never blocks while the queue has items, and a
// goroutine that runs 10 ms without being scheduled again is preempted by
// the runtime's monitor (a signal, or its P taken from it in a system
// call, handed to another thread that finds nothing to do); from each such
// event the monitor polls every 20 µs for a millisecond, catching the
// longer reads and listings in their system call and taking their P too.
// On Go's src (some 20 µs an item) yielding every 128 items cut the
// voluntary context switches of a busy grep by a quarter to a half and
// spared some 3% of its CPU.
const yieldEvery = 128

// Workers is how many goroutines a walk uses to walk and visit files.
func Workers() int { return max(2, runtime.GOMAXPROCS(0)) }

// Walk visits every regular file below folder start (a clean relative path
// from the root, "." for the root itself) that no .gitignore ignores and
// w.Excluded does not leave out (a folder left out is never opened;
// nothing is visited when start itself is left out), from Workers
// goroutines at once; worker is the caller's index (0 to Workers()-1), for
// per-goroutine buffers. The order is unspecified. Folders below start
// that cannot be read are skipped; start itself must be a folder that can
// be opened, or Walk returns an error naming it. A panic in a walker
// goroutine (in visit too) stops the walk and is returned, as w.Go reports
// it. Walk returns ctx's error when it was cancelled, after every worker
// has stopped.
func (w *Walker) Walk(ctx context.Context, start string, visit func(worker int, f File)) (err error) {
	relStart := ""
	if start != "." {
		relStart = path.Clean(filepath.ToSlash(start))
	}
	excluded := w.Excluded
	if excluded == nil {
		excluded = func(string) bool { return false }
	}
	if excluded(relStart) {
		return ctx.Err() // nothing below start may be shown
	}
	var matcher *gitignore.Matcher
	if relStart != "" {
		// The rules of the folders above start; start's own are read when
		// it is listed.
		if matcher, err = IgnoreAbove(ctx, w.Root, path.Dir(relStart)); err != nil {
			return err
		}
	}
	top, err := OpenStart(w.Root, filepath.ToSlash(start), start)
	if err != nil {
		return err
	}
	// A panicking worker cancels wctx: the others then drain the queue
	// without listing or visiting anything more.
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	q := &queue{excluded: excluded}
	q.cond = sync.NewCond(&q.mu)
	top.refs.Store(1)
	q.push(item{dir: top, rel: relStart, isDir: true, matcher: matcher})

	n := Workers()
	results := make([]<-chan error, n)
	for worker := range n {
		results[worker] = w.Go("walk", func() error {
			var scratch []item // listDir's, reused from folder to folder
			for k := 1; ; k++ {
				it, ok := q.pop()
				if !ok {
					return nil
				}
				walkOne(wctx, stop, q, it, worker, visit, &scratch)
				if k%yieldEvery == 0 {
					runtime.Gosched()
				}
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
		return fmt.Errorf("walk of %s: %w", filepath.ToSlash(start), panicErr)
	}
	return ctx.Err()
}

// walkOne lists or visits one item and marks it done, even when it panics
// (the panic then stops the walk and goes on to the worker's guard).
func walkOne(ctx context.Context, stop func(), q *queue, it item, worker int, visit func(int, File), scratch *[]item) {
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
			listDir(q, it, scratch)
		} else {
			visit(worker, File{Dir: it.parent, Name: it.name, Rel: it.rel})
		}
	}
	finished = true
}

// listDir opens folder it, reads its .gitignore and queues its entries,
// gathered in scratch (the queue copies them): a walk's garbage is what
// makes the garbage collector run while it goes, and a slice of items per
// folder was a third of it.
func listDir(q *queue, it item, scratch *[]item) {
	d := it.dir // the start folder, opened by Walk
	if d == nil {
		var err error
		if d, err = it.parent.OpenSub(it.name); err != nil {
			return
		}
		d.refs.Store(1)
		defer d.release()
	}
	entries, _ := d.Entries() // a partial listing is still worth walking

	m := it.matcher
	for _, e := range entries {
		if e.Name() == ".gitignore" {
			m = d.loadIgnore(it.rel, e, m)
			break
		}
	}
	items := (*scratch)[:0]
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
		if m.Ignored(rel, isDir) || q.excluded(rel) {
			continue
		}
		items = append(items, item{parent: d, name: name, rel: rel, isDir: isDir, matcher: m})
	}
	d.refs.Add(int64(len(items)))
	q.push(items...)
	clear(items) // the queue has them: what they point to is not kept here
	*scratch = items[:0]
}
