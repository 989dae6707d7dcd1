package codetools

// The files a background job changes, told to the language servers
// (WithLanguageServers): the tree's stat index when the job starts, again
// when it ends (the servers are told then) and at each job_output or
// job_kill, whose answer reports the diagnostics of the files changed
// since the last report.

import (
	"context"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/llmtoolkit/llmtoolkit/internal/jobs"
	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
)

// jobEndScan bounds the scan made when a job ends, with nobody waiting.
const jobEndScan = 30 * time.Second

// jobWatch is one job's side of the tree: the index last compared, and
// the files changed since the last report.
type jobWatch struct {
	ex    *exclusions   // the starting call's excluded paths
	ended chan struct{} // closed once the end's scan is done

	mu      sync.Mutex
	base    map[string]snapshot.Hash
	pending map[string]bool
}

// jobWatches are the watches of the running jobs and of those ended and
// not yet reported, by job ID.
type jobWatches struct {
	mu     sync.Mutex
	by     map[int]*jobWatch
	ctx    context.Context // ended by Close: the end's scans stop
	cancel context.CancelFunc
	wg     sync.WaitGroup // the end's goroutines
}

// stopJobWatches ends the end's scans (Close, before the jobs are
// killed) and returns the function that waits for their goroutines.
func (c *CodeTools) stopJobWatches() func() {
	w := &c.jobWatch
	w.mu.Lock()
	if w.cancel != nil {
		w.cancel()
	}
	w.by = nil
	w.mu.Unlock()
	return w.wg.Wait
}

// treeFiles returns the tree's content index (bash_changes.go's engine),
// or an error; nil, nil when servers are off for bash.
func (c *CodeTools) treeFiles(ctx context.Context) (map[string]snapshot.Hash, error) {
	if c.lsp == nil || c.cfg.lsp.off["bash"] {
		return nil, nil
	}
	w := &c.bashWatch
	w.once.Do(func() {
		w.eng, w.err = snapshot.New(c.dir, snapshot.Options{MaxEntries: maxBashWatchEntries})
	})
	if w.err != nil {
		return nil, w.err
	}
	return w.eng.Files(ctx)
}

// watchJob scans the tree before a background job starts; nil when
// servers are off for bash or the tree cannot be scanned.
func (c *CodeTools) watchJob(ctx context.Context) *jobWatch {
	base, err := c.treeFiles(ctx)
	if err != nil || base == nil {
		return nil
	}
	return &jobWatch{ex: boundExclusionsOf(ctx), ended: make(chan struct{}), base: base, pending: map[string]bool{}}
}

// keepJobWatch files w under j's ID and, when j ends, scans the tree and
// tells the servers of the files it changed (their diagnostics wait for
// the next report).
func (c *CodeTools) keepJobWatch(j *jobs.Job, w *jobWatch) {
	if w == nil {
		return
	}
	jw := &c.jobWatch
	jw.mu.Lock()
	if jw.by == nil {
		jw.by = map[int]*jobWatch{}
	}
	if jw.ctx == nil {
		jw.ctx, jw.cancel = context.WithCancel(context.Background())
	}
	jw.by[j.ID()] = w
	closing := jw.ctx
	jw.wg.Add(1)
	jw.mu.Unlock()
	goGuarded("job changes", func() error {
		defer jw.wg.Done()
		defer close(w.ended)
		<-j.Done()
		ctx, cancel := context.WithTimeout(closing, jobEndScan)
		defer cancel()
		for _, rel := range c.advance(ctx, w) {
			abs := filepath.Join(c.dir, filepath.FromSlash(rel))
			if !c.lsp.Handles(abs) {
				continue
			}
			if data, err := c.readForServer(abs); err == nil {
				c.lsp.Changed(ctx, abs, string(data))
			}
		}
		return nil
	})
}

// advance scans the tree, adds what changed since w's index to its
// pending files and returns those newly changed.
func (c *CodeTools) advance(ctx context.Context, w *jobWatch) []string {
	after, err := c.treeFiles(ctx)
	if err != nil || after == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	c.checkServerViews()
	c.serversSeeTree(ctx)
	c.serversSeeNew(addedFiles(w.base, after))
	changed := changedFiles(w.base, after, w.ex)
	for _, p := range changed {
		w.pending[p] = true
	}
	w.base = after
	return changed
}

// jobDiagnostics reports the diagnostics of the files j changed since the
// last report (scanning the tree now when it still runs), for
// job_output's and job_kill's answers; a job ended and reported is
// forgotten.
func (c *CodeTools) jobDiagnostics(ctx context.Context, j *jobs.Job) string {
	c.jobWatch.mu.Lock()
	w := c.jobWatch.by[j.ID()]
	c.jobWatch.mu.Unlock()
	if w == nil {
		return ""
	}
	ended := false
	select {
	case <-j.Done():
		select { // the end's scan, bounded by the call
		case <-w.ended:
			ended = true
		case <-ctx.Done():
			return ""
		}
	default:
		c.advance(ctx, w)
	}
	w.mu.Lock()
	files := make([]string, 0, len(w.pending))
	for p := range w.pending {
		files = append(files, p)
	}
	clear(w.pending)
	w.mu.Unlock()
	if ended {
		c.jobWatch.mu.Lock()
		delete(c.jobWatch.by, j.ID())
		c.jobWatch.mu.Unlock()
	}
	ex := boundExclusionsOf(ctx) // the reading call's too
	files = slices.DeleteFunc(files, ex.excluded)
	sort.Strings(files)
	return c.diagnoseBash(ctx, files)
}
