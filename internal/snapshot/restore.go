package snapshot

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrDenied is wrapped by the error of a restore that would write a path
// the host does not allow ([RestoreOptions.Allow]); nothing was written.
var ErrDenied = errors.New("snapshot: the host does not allow writing")

// RestoreOptions control [Engine.Restore].
type RestoreOptions struct {
	// DryRun computes the changes without writing anything.
	DryRun bool
	// Allow, when set, is asked for every change before anything is
	// written; one error refuses the whole restore.
	Allow func(c Change) error
	// MaxChanges bounds the changes listed (and made); 0 is no bound.
	// A restore past it is refused before it writes.
	MaxChanges int
}

// Skipped is a change a restore could not make.
type Skipped struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Restored is what [Engine.Restore] did.
type Restored struct {
	// Before is the tree found before the restore (stored: restoring it
	// undoes the restore); After the tree after it.
	Before, After Snapshot
	// Changes are those from Before to the target, sorted by path.
	Changes []Change
	// Skipped lists what could not be put back: files over the size bound,
	// devices and sockets, folders that still hold ignored files.
	Skipped []Skipped
	// Exact reports that After is the target tree itself.
	Exact bool
}

// Restore puts the root back as the tree to records it: contents, modes,
// links, pipes, folders; what the tree does not hold is removed, what it
// holds and the root lacks is created. It scans the root first (so the
// state it replaces is stored, Before), lists the changes, asks
// opts.Allow for each, and only then writes; it scans again after
// (After). Paths the host excludes and files ignored by .gitignore are
// never touched. Owners (where the process may set them) and modification
// times are restored too, a folder's last; a hard link comes back as a
// file of its own.
func (e *Engine) Restore(ctx context.Context, b Blobs, to Hash, opts RestoreOptions) (Restored, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var r Restored
	before, err := e.scan(ctx, b, true)
	if err != nil {
		return r, err
	}
	r.Before = before
	max := opts.MaxChanges
	d, truncated, err := diff(ctx, b, before.Tree, to, max)
	if err != nil {
		return r, err
	}
	if truncated {
		return r, fmt.Errorf("%w: more than %d changes to restore", ErrTooLarge, max)
	}
	changes := d.out
	r.Changes = changes
	var denied []string
	for _, c := range append(changes[:len(changes):len(changes)], d.folders...) {
		if e.opts.Excluded(c.Path) {
			denied = append(denied, fmt.Sprintf("%q (excluded by the host)", c.Path))
			continue
		}
		if opts.Allow != nil {
			if err := opts.Allow(c); err != nil {
				denied = append(denied, fmt.Sprintf("%q (%v)", c.Path, err))
			}
		}
	}
	if len(denied) > 0 {
		if len(denied) > 20 {
			denied = append(denied[:20], fmt.Sprintf("and %d more", len(denied)-20))
		}
		return r, fmt.Errorf("%w: %s; nothing was written", ErrDenied, strings.Join(denied, ", "))
	}
	if opts.DryRun {
		r.After = before
		r.Exact = before.Tree == to
		return r, nil
	}
	r.Skipped, err = e.apply(ctx, b, changes, d.folders)
	if err != nil {
		return r, err
	}
	after, err := e.scan(ctx, b, true)
	if err != nil {
		return r, err
	}
	r.After = after
	if r.Exact, err = equivalent(ctx, b, after.Tree, to); err != nil {
		return r, err
	}
	return r, nil
}

// equivalent reports whether the trees a and b record the same root: the
// same tree, or one that differs only where a listing of the first format
// (no owners, no times) recorded no owner or time.
func equivalent(ctx context.Context, b Blobs, a, to Hash) (bool, error) {
	if a == to {
		return true, nil
	}
	d, _, err := diff(ctx, b, a, to, 1)
	if err != nil {
		return false, err
	}
	if len(d.out) > 0 {
		return false, nil
	}
	for _, f := range d.folders {
		if !f.Old.sameMeta(f.New) {
			return false, nil
		}
	}
	return true, nil
}
