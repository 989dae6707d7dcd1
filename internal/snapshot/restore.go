package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path"
	"sort"
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
	// Links is the target's hard-link groups ([Snapshot.Links] of the
	// scan that recorded it): the paths it names are linked again as they
	// were, and files linked since are made separate. Zero (a tree
	// recorded before hard links were): links are left as they are.
	Links Hash
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
// times are restored too, a folder's last; with opts.Links, hard links
// too.
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
	var plan linkPlan
	if !opts.Links.IsZero() {
		if plan, err = planLinks(ctx, b, before, to, opts.Links, changes); err != nil {
			return r, err
		}
		breaking := map[string]bool{}
		for _, c := range plan.breaks {
			breaking[c.Path] = true
		}
		kept := changes[:0:0]
		for _, c := range changes {
			if !breaking[c.Path] { // a mode or time change: the rewrite makes it
				kept = append(kept, c)
			}
		}
		changes = append(kept, plan.breaks...)
		sort.SliceStable(changes, func(i, j int) bool { return lessPath(changes[i].Path, changes[j].Path) })
		d.folders = append(d.folders, plan.folders...)
	}
	r.Changes = changes
	var denied []string
	asked := append(changes[:len(changes):len(changes)], d.folders...)
	for _, p := range plan.link {
		asked = append(asked, Change{Path: p, Op: OpModified})
	}
	for _, c := range asked {
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
	r.Skipped, err = e.apply(ctx, b, changes, d.folders, plan.groups)
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
	if !opts.Links.IsZero() && after.Links != opts.Links {
		r.Exact = false
	}
	return r, nil
}

// linkPlan is what a restore does about hard links.
type linkPlan struct {
	groups  [][]string // the target's groups, linked after the changes
	link    []string   // the paths that may be linked (asked of Allow)
	breaks  []Change   // files linked now that the target has apart: written again
	folders []Change   // the folders of link and breaks (their times are set back)
}

// planLinks compares the hard-link groups of the state before a restore
// with the target's.
func planLinks(ctx context.Context, b Blobs, before Snapshot, to, links Hash, changes []Change) (linkPlan, error) {
	var p linkPlan
	target, err := ReadLinks(ctx, b, links)
	if err != nil {
		return p, err
	}
	var now [][]string
	if !before.Links.IsZero() {
		if now, err = ReadLinks(ctx, b, before.Links); err != nil {
			return p, err
		}
	}
	p.groups = target
	tk, nk := groupKeys(target), groupKeys(now)
	written := map[string]bool{}
	for _, c := range changes {
		if c.Op == OpAdded || c.Op == OpModified || c.Op == OpRemoved {
			written[c.Path] = true
		}
	}
	folders := map[string]bool{}
	for _, g := range target {
		for _, q := range g {
			if tk[q] != nk[q] || written[q] {
				p.link = append(p.link, q)
				folders[path.Dir(q)] = true
			}
		}
	}
	for q := range nk {
		if tk[q] == nk[q] || written[q] {
			continue
		}
		en, ok, err := lookup(ctx, b, to, q)
		if err != nil {
			return p, err
		}
		if !ok || en.Kind != KindFile {
			continue // removed by the changes, or no longer a file
		}
		old, _, err := lookup(ctx, b, before.Tree, q)
		if err != nil {
			return p, err
		}
		p.breaks = append(p.breaks, Change{Path: q, Op: OpModified, Old: old, New: en})
		folders[path.Dir(q)] = true
	}
	for f := range folders {
		if f == "." {
			continue
		}
		en, ok, err := lookup(ctx, b, to, f)
		if err != nil {
			return p, err
		}
		if ok && en.Kind == KindDir {
			p.folders = append(p.folders, Change{Path: f, Op: OpMeta, New: en})
		}
	}
	return p, nil
}

// lessPath orders paths as a diff lists them: a folder before what it
// holds, names compared element by element.
func lessPath(a, b string) bool {
	as, bs := strings.Split(a, "/"), strings.Split(b, "/")
	for i := range min(len(as), len(bs)) {
		if as[i] != bs[i] {
			return as[i] < bs[i]
		}
	}
	return len(as) < len(bs)
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
