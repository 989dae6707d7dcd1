package snapshot

import (
	"context"
	"fmt"
)

// Op is what a change does to a path.
type Op string

// The operations of a diff.
const (
	OpAdded    Op = "added"
	OpRemoved  Op = "removed"
	OpModified Op = "modified" // content, link target or type
	OpMode     Op = "mode"     // permission bits (and maybe owner or time) only
	OpMeta     Op = "meta"     // owner or modification time only
)

// Change is one path that differs between two trees. A folder added or
// removed is listed with everything below it.
type Change struct {
	// Path is root-relative and slash-separated.
	Path string
	Op   Op
	// Old and New are the entries of the first and the second tree (the
	// zero Entry where the path is absent). Their Name is the last
	// element of Path.
	Old, New Entry
}

// ReadTree returns the entries of the folder listing h, decoded.
func ReadTree(ctx context.Context, b Blobs, h Hash) ([]Entry, error) {
	data, err := b.Get(ctx, h)
	if err != nil {
		return nil, err
	}
	if Sum(data) != h {
		return nil, fmt.Errorf("%w (listing %s does not match its hash)", errBadTree, h)
	}
	return decodeTree(data)
}

// Diff lists what changes from the tree from to the tree to, sorted by
// path (a folder before what it holds). Equal subtrees are skipped by
// their hash, so the cost is that of what changed. maxChanges bounds the
// list (0: no bound); past it the list ends and truncated is true.
//
// A folder whose only change is its owner or time is listed (OpMeta) when
// nothing below it changed; when something did, the folder's own time
// follows from it and is not listed.
func Diff(ctx context.Context, b Blobs, from, to Hash, maxChanges int) (changes []Change, truncated bool, err error) {
	d, truncated, err := diff(ctx, b, from, to, maxChanges)
	return d.out, truncated, err
}

func diff(ctx context.Context, b Blobs, from, to Hash, maxChanges int) (*differ, bool, error) {
	d := &differ{ctx: ctx, b: b, max: maxChanges}
	err := d.trees("", from, to)
	if err == errEnough {
		return d, true, nil
	}
	return d, false, err
}

type differ struct {
	ctx context.Context
	b   Blobs
	max int
	out []Change
	// folders are the folders present in both trees whose listings
	// differ (Old and New their entries): a restore writes in them, so it
	// sets their owner and time last.
	folders []Change
	// fetched holds the listings read ahead, a folder's worth at a time,
	// from a [BatchBlobs] store (each taken out when read).
	fetched map[Hash][]byte
}

var errEnough = fmt.Errorf("enough changes")

func (d *differ) add(c Change) error {
	if d.max > 0 && len(d.out) >= d.max {
		return errEnough
	}
	d.out = append(d.out, c)
	return nil
}

func (d *differ) read(h Hash) ([]Entry, error) {
	if h.IsZero() {
		return nil, nil
	}
	if err := d.ctx.Err(); err != nil {
		return nil, err
	}
	if data, ok := d.fetched[h]; ok {
		delete(d.fetched, h)
		if Sum(data) != h {
			return nil, fmt.Errorf("%w (listing %s does not match its hash)", errBadTree, h)
		}
		return decodeTree(data)
	}
	return ReadTree(d.ctx, d.b, h)
}

// readAheadBatch bounds the listings asked of the store at once.
const readAheadBatch = 512

// readAhead fetches in one go the listings of the folders of a and b
// (the two listings of one folder) that the walk will read: those of a
// folder whose hash differs on the two sides, or that is on one side
// only. A store without batches is read a listing at a time.
func (d *differ) readAhead(a, b []Entry) error {
	bb, ok := d.b.(BatchBlobs)
	if !ok {
		return nil
	}
	var hs []Hash
	want := func(e Entry) {
		if e.Kind == KindDir && !e.Hash.IsZero() {
			if _, ok := d.fetched[e.Hash]; !ok {
				hs = append(hs, e.Hash)
			}
		}
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			want(a[i])
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			want(b[j])
			j++
		default:
			if a[i].Hash != b[j].Hash {
				want(a[i])
				want(b[j])
			}
			i, j = i+1, j+1
		}
	}
	if len(hs) < 2 {
		return nil
	}
	if d.fetched == nil {
		d.fetched = map[Hash][]byte{}
	}
	for len(hs) > 0 {
		n := min(len(hs), readAheadBatch)
		got, err := bb.GetMany(d.ctx, hs[:n])
		if err != nil {
			return err
		}
		for h, data := range got {
			d.fetched[h] = data
		}
		hs = hs[n:]
	}
	return nil
}

func (d *differ) trees(rel string, from, to Hash) error {
	if from == to {
		return nil
	}
	a, err := d.read(from)
	if err != nil {
		return err
	}
	b, err := d.read(to)
	if err != nil {
		return err
	}
	if err := d.readAhead(a, b); err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || (i < len(a) && a[i].Name < b[j].Name):
			if err := d.whole(join(rel, a[i].Name), a[i], OpRemoved); err != nil {
				return err
			}
			i++
		case i == len(a) || b[j].Name < a[i].Name:
			if err := d.whole(join(rel, b[j].Name), b[j], OpAdded); err != nil {
				return err
			}
			j++
		default:
			if err := d.entry(join(rel, a[i].Name), a[i], b[j]); err != nil {
				return err
			}
			i, j = i+1, j+1
		}
	}
	return nil
}

func (d *differ) entry(p string, o, n Entry) error {
	if o.same(n) {
		return nil
	}
	switch {
	case o.Kind == KindDir && n.Kind == KindDir:
		if o.Mode != n.Mode {
			if err := d.add(Change{Path: p, Op: OpMode, Old: o, New: n}); err != nil {
				return err
			}
		} else if o.Hash == n.Hash && !o.sameMeta(n) {
			return d.add(Change{Path: p, Op: OpMeta, Old: o, New: n})
		}
		if o.Hash == n.Hash {
			return nil
		}
		d.folders = append(d.folders, Change{Path: p, Op: OpMeta, Old: o, New: n})
		return d.trees(p, o.Hash, n.Hash)
	case o.Kind != n.Kind && (o.Kind == KindDir || n.Kind == KindDir):
		if err := d.whole(p, o, OpRemoved); err != nil {
			return err
		}
		return d.whole(p, n, OpAdded)
	case o.sameContent(n) && o.Mode != n.Mode:
		return d.add(Change{Path: p, Op: OpMode, Old: o, New: n})
	case o.sameContent(n):
		return d.add(Change{Path: p, Op: OpMeta, Old: o, New: n})
	}
	return d.add(Change{Path: p, Op: OpModified, Old: o, New: n})
}

// whole lists e at p, and all below it when it is a folder, as op.
func (d *differ) whole(p string, e Entry, op Op) error {
	c := Change{Path: p, Op: op}
	if op == OpAdded {
		c.New = e
	} else {
		c.Old = e
	}
	if err := d.add(c); err != nil {
		return err
	}
	if e.Kind != KindDir {
		return nil
	}
	sub, err := d.read(e.Hash)
	if err != nil {
		return err
	}
	if err := d.readAhead(nil, sub); err != nil {
		return err
	}
	for _, s := range sub {
		if err := d.whole(join(p, s.Name), s, op); err != nil {
			return err
		}
	}
	return nil
}

// Flatten returns every path of the tree h as an added change, a folder
// before what it holds.
func Flatten(ctx context.Context, b Blobs, h Hash) ([]Change, error) {
	d := differ{ctx: ctx, b: b}
	err := d.trees("", Hash{}, h)
	return d.out, err
}

func join(rel, name string) string {
	if rel == "" {
		return name
	}
	return rel + "/" + name
}
