package snapshot

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"golang.org/x/sys/unix"
)

// dirs opens the folders of a restore by descending from the root one
// name at a time with O_NOFOLLOW: a link, wherever it lies on the way,
// is refused, never followed. Handles are O_PATH (a folder without read
// permission still takes *at calls) and cached, a bounded number.
type dirs struct {
	root int
	fds  map[string]int
}

const maxOpenDirs = 256

func (d *dirs) open(rel string) (int, error) {
	if rel == "" || rel == "." {
		return d.root, nil
	}
	if fd, ok := d.fds[rel]; ok {
		return fd, nil
	}
	parent, err := d.open(path.Dir(rel))
	if err != nil {
		return -1, err
	}
	fd, err := retry(func() (int, error) {
		return unix.Openat(parent, path.Base(rel), unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	})
	if err != nil {
		return -1, fmt.Errorf("snapshot: opening folder %q (a link on the way is never followed): %w", rel, err)
	}
	d.fds[rel] = fd
	return fd, nil
}

// trim closes the cached handles past maxOpenDirs; called between
// changes, never while a handle is in use.
func (d *dirs) trim() {
	if len(d.fds) >= maxOpenDirs {
		d.closeAll()
	}
}

func (d *dirs) forget(rel string) {
	for k, fd := range d.fds {
		if k == rel || strings.HasPrefix(k, rel+"/") {
			unix.Close(fd)
			delete(d.fds, k)
		}
	}
}

func (d *dirs) closeAll() {
	for k, fd := range d.fds {
		unix.Close(fd)
		delete(d.fds, k)
	}
}

func parentOf(p string) (dir, name string) {
	dir, name = path.Split(p)
	return strings.TrimSuffix(dir, "/"), name
}

// restorer applies one restore's changes.
type restorer struct {
	ctx   context.Context
	b     Blobs
	d     *dirs
	modes map[string]uint32 // folders whose mode is set last
	metas map[string]Entry  // folders whose owner and time are set last
	skip  []Skipped
	fetch *prefetch
}

// prefetch reads the contents a restore writes ahead of it, a window at a
// time from a [BatchBlobs] store (one query for up to prefetchBlobs
// blobs or prefetchBytes bytes), in the order the files are written.
type prefetch struct {
	bb     BatchBlobs
	order  []Hash  // the contents to write, in order
	sizes  []int64 // their sizes
	next   int     // the first of order not yet fetched
	window map[Hash][]byte
	asked  map[Hash]struct{} // what the window's query asked for
}

const (
	prefetchBlobs = 256
	prefetchBytes = 16 << 20
)

func newPrefetch(b Blobs, changes []Change) *prefetch {
	bb, ok := b.(BatchBlobs)
	if !ok {
		return nil
	}
	p := &prefetch{bb: bb}
	for _, c := range changes {
		if (c.Op == OpAdded || c.Op == OpModified) && c.New.Kind == KindFile && !c.New.Huge {
			p.order = append(p.order, c.New.Hash)
			p.sizes = append(p.sizes, c.New.Size)
		}
	}
	return p
}

// get returns the content h, fetching the next window when h is not in
// the current one. ok is false when the store lacks it.
func (p *prefetch) get(ctx context.Context, h Hash) (data []byte, ok bool, err error) {
	if data, ok := p.window[h]; ok {
		return data, true, nil
	}
	if _, ok := p.asked[h]; ok || p.next >= len(p.order) {
		return nil, false, nil // not held (or not foreseen): asked alone
	}
	var hs []Hash
	var bytes int64
	for p.next < len(p.order) && len(hs) < prefetchBlobs && (len(hs) == 0 || bytes+p.sizes[p.next] <= prefetchBytes) {
		hs = append(hs, p.order[p.next])
		bytes += p.sizes[p.next]
		p.next++
	}
	if p.window, err = p.bb.GetMany(ctx, hs); err != nil {
		return nil, false, err
	}
	p.asked = make(map[Hash]struct{}, len(hs))
	for _, x := range hs {
		p.asked[x] = struct{}{}
	}
	data, ok = p.window[h]
	return data, ok, nil
}

// apply makes changes (sorted, a folder before what it holds): removals
// deepest first, then creations and modifications, then folder modes.
func (e *Engine) apply(ctx context.Context, b Blobs, changes, changedFolders []Change, links [][]string) ([]Skipped, error) {
	root, err := openRoot(e.root)
	if err != nil {
		return nil, err
	}
	defer unix.Close(root)
	r := &restorer{ctx: ctx, b: b, d: &dirs{root: root, fds: map[string]int{}}, modes: map[string]uint32{}, metas: map[string]Entry{}, fetch: newPrefetch(b, changes)}
	for _, f := range changedFolders {
		r.metas[f.Path] = f.New
	}
	defer r.d.closeAll()
	for i := len(changes) - 1; i >= 0; i-- {
		r.d.trim()
		if c := changes[i]; c.Op == OpRemoved {
			if err := r.remove(c); err != nil {
				return r.skip, err
			}
		}
	}
	for _, c := range changes {
		if err := ctx.Err(); err != nil {
			return r.skip, err
		}
		r.d.trim()
		var err error
		switch c.Op {
		case OpAdded, OpModified:
			err = r.create(c)
		case OpMode, OpMeta:
			err = r.chmod(c)
		}
		if err != nil {
			return r.skip, err
		}
	}
	folders := make([]string, 0, len(r.modes))
	for p := range r.modes {
		folders = append(folders, p)
	}
	sort.Slice(folders, func(i, j int) bool { return strings.Count(folders[i], "/") > strings.Count(folders[j], "/") })
	for _, p := range folders {
		dir, name := parentOf(p)
		pfd, err := r.d.open(dir)
		if err != nil {
			continue // removed with its parent
		}
		var st unix.Stat_t
		if fstatat(pfd, name, &st) != nil || kindOf(st.Mode) != KindDir {
			continue
		}
		if err := unix.Fchmodat(pfd, name, r.modes[p], 0); err != nil {
			return r.skip, fmt.Errorf("snapshot: setting the mode of %q: %w", p, err)
		}
	}
	if err := r.link(links); err != nil {
		return r.skip, err
	}
	// Owners and times of folders last: every write in a folder moved
	// its time.
	metas := make([]Change, 0, len(r.metas))
	for p, en := range r.metas {
		metas = append(metas, Change{Path: p, New: en})
	}
	sort.Slice(metas, func(i, j int) bool { return metas[i].Path < metas[j].Path })
	for _, f := range metas {
		dir, name := parentOf(f.Path)
		pfd, err := r.d.open(dir)
		if err != nil {
			continue // removed with its parent
		}
		var st unix.Stat_t
		if fstatat(pfd, name, &st) != nil || kindOf(st.Mode) != KindDir {
			continue
		}
		if err := r.meta(pfd, name, f.Path, f.New, &st); err != nil {
			return r.skip, err
		}
	}
	return r.skip, nil
}

// meta sets the owner and modification time of name in folder fd (its
// stat st) to en's, where en recorded them: the owner when it differs (a
// refusal is Skipped, not an error: only a privileged process may give a
// file away), the time always (a link's own, never its target's).
func (r *restorer) meta(fd int, name, p string, en Entry, st *unix.Stat_t) error {
	if !en.Meta {
		return nil
	}
	if st.Uid != en.UID || st.Gid != en.GID {
		err := unix.Fchownat(fd, name, int(en.UID), int(en.GID), unix.AT_SYMLINK_NOFOLLOW)
		if errors.Is(err, unix.EPERM) || errors.Is(err, unix.EINVAL) {
			r.skip = append(r.skip, Skipped{p, fmt.Sprintf("its owner %d:%d could not be set back: %v", en.UID, en.GID, err)})
		} else if err != nil {
			return fmt.Errorf("snapshot: setting the owner of %q: %w", p, err)
		}
		if err == nil && en.Kind != KindLink && en.Kind != KindDir {
			// chown clears setuid and setgid: set the mode again.
			if err := unix.Fchmodat(fd, name, en.Mode, 0); err != nil {
				return fmt.Errorf("snapshot: setting the mode of %q: %w", p, err)
			}
		}
	}
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(en.Mtime)}
	if err := unix.UtimesNanoAt(fd, name, ts, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("snapshot: setting the time of %q: %w", p, err)
	}
	return nil
}

// writable runs fn in folder dir; when fn is refused for lack of
// permission, dir is made writable for its owner (its mode is set back
// last) and fn runs again.
func (r *restorer) writable(dir string, fn func(fd int) error) error {
	fd, err := r.d.open(dir)
	if err != nil {
		return err
	}
	err = fn(fd)
	if !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EPERM) {
		return err
	}
	var st unix.Stat_t
	pdir, name := parentOf(dir)
	pfd := r.d.root
	if dir != "" {
		if pfd, err = r.d.open(pdir); err != nil {
			return err
		}
	} else {
		name = "."
	}
	if e := fstatat(pfd, name, &st); e != nil {
		return err
	}
	if _, ok := r.modes[dir]; !ok {
		r.modes[dir] = st.Mode & 0o7777
	}
	if e := unix.Fchmodat(pfd, name, st.Mode&0o7777|0o700, 0); e != nil {
		return err
	}
	return fn(fd)
}

func (r *restorer) remove(c Change) error {
	dir, name := parentOf(c.Path)
	flags := 0
	if c.Old.Kind == KindDir {
		flags = unix.AT_REMOVEDIR
		r.d.forget(c.Path)
	}
	err := r.writable(dir, func(fd int) error { return unix.Unlinkat(fd, name, flags) })
	switch {
	case err == nil, errors.Is(err, unix.ENOENT):
		delete(r.modes, c.Path)
		return nil
	case errors.Is(err, unix.ENOTEMPTY), errors.Is(err, unix.EEXIST):
		r.skip = append(r.skip, Skipped{c.Path, "the folder still holds files the checkpoints leave out (ignored or excluded); it was kept"})
		return nil
	}
	return fmt.Errorf("snapshot: removing %q: %w", c.Path, err)
}

// tempName returns a random name for an entry being made, not yet in
// place. (A restore-wide prefix with a count was tried: on ext4 the
// creates then cost about twice the CPU.)
func (r *restorer) tempName() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return ".llmtoolkit-rewind-" + hex.EncodeToString(b[:])
}

func (r *restorer) create(c Change) error {
	dir, name := parentOf(c.Path)
	n := c.New
	switch n.Kind {
	case KindDir:
		err := r.writable(dir, func(fd int) error { return unix.Mkdirat(fd, name, 0o700) })
		if err != nil && !errors.Is(err, unix.EEXIST) {
			return fmt.Errorf("snapshot: creating folder %q: %w", c.Path, err)
		}
		r.modes[c.Path] = n.Mode
		r.metas[c.Path] = n
		return nil
	case KindFile:
		if n.Huge {
			r.skip = append(r.skip, Skipped{c.Path, fmt.Sprintf("a file of %d bytes, over the size bound: recorded by hash and size only", n.Size)})
			return nil
		}
		data, err := r.content(n.Hash)
		if err != nil {
			if errors.Is(err, ErrMissingBlob) {
				r.skip = append(r.skip, Skipped{c.Path, "its content is no longer in the store"})
				return nil
			}
			return err
		}
		if Sum(data) != n.Hash {
			return fmt.Errorf("snapshot: the stored content of %q does not match its hash", c.Path)
		}
		return r.replace(dir, name, c.Path, func(fd int, tmp string) error {
			ffd, err := retry(func() (int, error) {
				return unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
			})
			if err != nil {
				return err
			}
			defer unix.Close(ffd)
			for p := data; len(p) > 0; {
				w, err := unix.Write(ffd, p)
				if err == unix.EINTR {
					continue
				}
				if err != nil {
					return err
				}
				p = p[w:]
			}
			if err := unix.Fchmod(ffd, n.Mode); err != nil {
				return err
			}
			return r.metaOfNew(fd, tmp, c.Path, n)
		})
	case KindLink:
		return r.replace(dir, name, c.Path, func(fd int, tmp string) error {
			if err := unix.Symlinkat(n.Target, fd, tmp); err != nil {
				return err
			}
			return r.metaOfNew(fd, tmp, c.Path, n)
		})
	case KindFIFO:
		return r.replace(dir, name, c.Path, func(fd int, tmp string) error {
			if err := unix.Mknodat(fd, tmp, unix.S_IFIFO|0o600, 0); err != nil {
				return err
			}
			if err := unix.Fchmodat(fd, tmp, n.Mode, 0); err != nil {
				return err
			}
			return r.metaOfNew(fd, tmp, c.Path, n)
		})
	}
	r.skip = append(r.skip, Skipped{c.Path, "a " + n.Kind.String() + " is recorded, not recreated"})
	return nil
}

// link makes each group's paths names of one file again: every path
// that is not its first's file is replaced (a temporary name renamed over
// it) by a hard link to the first. A group whose first path is not a
// regular file is Skipped.
func (r *restorer) link(groups [][]string) error {
	for _, g := range groups {
		if err := r.ctx.Err(); err != nil {
			return err
		}
		r.d.trim()
		dir0, name0 := parentOf(g[0])
		fd0, err := r.d.open(dir0)
		if err != nil {
			r.skip = append(r.skip, Skipped{g[0], fmt.Sprintf("its hard links could not be made again: %v", err)})
			continue
		}
		var st0 unix.Stat_t
		if err := fstatat(fd0, name0, &st0); err != nil || kindOf(st0.Mode) != KindFile {
			r.skip = append(r.skip, Skipped{g[0], "its hard links could not be made again: it is not a regular file"})
			continue
		}
		for _, q := range g[1:] {
			dir, name := parentOf(q)
			fd, err := r.d.open(dir)
			if err != nil {
				return err
			}
			var st unix.Stat_t
			if fstatat(fd, name, &st) == nil && st.Dev == st0.Dev && st.Ino == st0.Ino {
				continue // linked already
			}
			if err := r.replace(dir, name, q, func(fd int, tmp string) error {
				return unix.Linkat(fd0, name0, fd, tmp, 0)
			}); err != nil {
				return err
			}
		}
	}
	return nil
}

// metaOfNew sets the owner and time of tmp, the entry just made for p in
// folder fd, before it is renamed into place.
func (r *restorer) metaOfNew(fd int, tmp, p string, n Entry) error {
	var st unix.Stat_t
	if err := fstatat(fd, tmp, &st); err != nil {
		return err
	}
	return r.meta(fd, tmp, p, n, &st)
}

// content returns the blob h, from the prefetched window when the store
// takes batches.
func (r *restorer) content(h Hash) ([]byte, error) {
	if r.fetch != nil {
		data, ok, err := r.fetch.get(r.ctx, h)
		if err != nil || ok {
			return data, err
		}
	}
	return r.b.Get(r.ctx, h)
}

// replace makes the new entry under a temporary name with mk, then renames
// it over name: the path holds the old entry or the new one, never half.
func (r *restorer) replace(dir, name, p string, mk func(fd int, tmp string) error) error {
	tmp := r.tempName()
	err := r.writable(dir, func(fd int) error {
		if err := mk(fd, tmp); err != nil {
			_ = unix.Unlinkat(fd, tmp, 0)
			return err
		}
		if err := unix.Renameat(fd, tmp, fd, name); err != nil {
			_ = unix.Unlinkat(fd, tmp, 0)
			return err
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("snapshot: writing %q: %w", p, err)
	}
	return nil
}

// chmod makes a change of mode, owner or time (OpMode, OpMeta).
func (r *restorer) chmod(c Change) error {
	if c.New.Kind == KindDir {
		r.modes[c.Path] = c.New.Mode
		r.metas[c.Path] = c.New
		return nil
	}
	dir, name := parentOf(c.Path)
	return r.writable(dir, func(fd int) error {
		var st unix.Stat_t
		if err := fstatat(fd, name, &st); err != nil {
			return fmt.Errorf("snapshot: %q: %w", c.Path, err)
		}
		if kindOf(st.Mode) != c.New.Kind {
			return fmt.Errorf("snapshot: %q changed type during the restore", c.Path)
		}
		if c.New.Kind != KindLink && st.Mode&0o7777 != c.New.Mode {
			if err := unix.Fchmodat(fd, name, c.New.Mode, 0); err != nil {
				return err
			}
		}
		return r.meta(fd, name, c.Path, c.New, &st)
	})
}
