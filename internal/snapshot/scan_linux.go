package snapshot

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/gitignore"
	"github.com/llmtoolkit/llmtoolkit/internal/guard"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

// scanState is one scan in progress.
type scanState struct {
	ctx     context.Context
	e       *Engine
	b       Blobs
	cutoff  int64 // ns: stat times at or after it are racy
	old     map[string]*dirRecord
	sem     chan struct{}
	entries atomic.Int64

	mu    sync.Mutex
	index map[string]*dirRecord
	known map[Hash]struct{} // blobs this scan stored or will (pending)
	// links are the paths of each file with more than one name.
	links map[[2]uint64][]string
	// pending are the new blobs not yet written (a BatchBlobs store).
	pending      []Blob
	pendingBytes int
	snap         Snapshot
	hashed       atomic.Int64
	hbytes       atomic.Int64
}

func (e *Engine) scan(ctx context.Context, b Blobs, stores bool) (Snapshot, error) {
	start := e.now()
	old := e.index
	if stores && !e.stored {
		old = nil // the last scan stored nothing (Files): read and store it all
	}
	s := &scanState{
		ctx: ctx, e: e, b: b,
		cutoff: start.Add(-racyMargin).UnixNano(),
		old:    old,
		sem:    make(chan struct{}, e.opts.Workers-1),
		index:  make(map[string]*dirRecord, len(e.index)),
		known:  map[Hash]struct{}{},
	}
	fd, err := openRoot(e.root)
	if err != nil {
		return Snapshot{}, err
	}
	var m *gitignore.Matcher
	var rst unix.Stat_t
	if err := unix.Fstat(fd, &rst); err != nil {
		unix.Close(fd)
		return Snapshot{}, fmt.Errorf("snapshot: the root %s: %w", e.root, err)
	}
	h, err := s.dir(fd, "", statOf(&rst), m, 0)
	if err == nil {
		var groups [][]string
		for _, g := range s.links {
			if len(g) > 1 {
				groups = append(groups, g)
			}
		}
		data := EncodeLinks(groups)
		s.snap.Links = Sum(data)
		err = s.put(s.snap.Links, data)
	}
	if err == nil {
		err = s.flush()
	}
	if err != nil {
		return Snapshot{}, err
	}
	s.snap.Tree = h
	s.snap.Entries = int(s.entries.Load())
	s.snap.Hashed = int(s.hashed.Load())
	s.snap.HashedBytes = s.hbytes.Load()
	sort.Strings(s.snap.Huge)
	e.index = s.index
	e.stored = stores
	return s.snap, nil
}

// openRoot opens the root folder (following links in its own path: the
// host named it).
func openRoot(root string) (int, error) {
	fd, err := retry(func() (int, error) {
		return unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	})
	if err != nil {
		return -1, fmt.Errorf("snapshot: opening the root %s: %w", root, err)
	}
	return fd, nil
}

func retry(fn func() (int, error)) (int, error) {
	for {
		n, err := fn()
		if err != unix.EINTR {
			return n, err
		}
	}
}

// Bounds of the blobs a scan holds before it writes them (one batch).
const (
	batchBlobs = 512
	batchBytes = 8 << 20
)

// put stores the blob h (data) unless this scan has it already. With a
// [BatchBlobs] store, new blobs wait in a batch, written when it is full
// and at the end of the scan (flush), before the scan returns.
func (s *scanState) put(h Hash, data []byte) error {
	s.mu.Lock()
	if _, ok := s.known[h]; ok {
		s.mu.Unlock()
		return nil
	}
	s.known[h] = struct{}{}
	if _, ok := s.b.(BatchBlobs); !ok {
		s.mu.Unlock()
		return s.putOne(h, data)
	}
	s.pending = append(s.pending, Blob{Hash: h, Data: data})
	s.pendingBytes += len(data)
	var batch []Blob
	if len(s.pending) >= batchBlobs || s.pendingBytes >= batchBytes {
		batch, s.pending, s.pendingBytes = s.pending, nil, 0
	}
	s.mu.Unlock()
	return s.write(batch)
}

// putOne stores one blob unless the store holds it.
func (s *scanState) putOne(h Hash, data []byte) error {
	ok, err := s.b.Has(s.ctx, h)
	if err != nil || ok {
		return err
	}
	if err := s.b.Put(s.ctx, h, data); err != nil {
		return err
	}
	s.mu.Lock()
	s.snap.Stored++
	s.snap.StoredBytes += int64(len(data))
	s.mu.Unlock()
	return nil
}

// flush writes the blobs still waiting.
func (s *scanState) flush() error {
	s.mu.Lock()
	batch := s.pending
	s.pending, s.pendingBytes = nil, 0
	s.mu.Unlock()
	return s.write(batch)
}

// write stores those of batch the store does not hold, in one go.
func (s *scanState) write(batch []Blob) error {
	if len(batch) == 0 {
		return nil
	}
	bb := s.b.(BatchBlobs)
	hs := make([]Hash, len(batch))
	for i, b := range batch {
		hs[i] = b.Hash
	}
	missing, err := bb.Missing(s.ctx, hs)
	if err != nil || len(missing) == 0 {
		return err
	}
	want := make(map[Hash]struct{}, len(missing))
	for _, h := range missing {
		want[h] = struct{}{}
	}
	out := batch[:0:0]
	var n int64
	for _, b := range batch {
		if _, ok := want[b.Hash]; ok {
			out = append(out, b)
			n += int64(len(b.Data))
			delete(want, b.Hash)
		}
	}
	if err := bb.PutMany(s.ctx, out); err != nil {
		return err
	}
	s.mu.Lock()
	s.snap.Stored += len(out)
	s.snap.StoredBytes += n
	s.mu.Unlock()
	return nil
}

// direntBufs pools the buffers folders are listed into.
var direntBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// readNames lists the folder fd (. and .. left out), straight from
// getdents: no *os.File, no poller.
func readNames(fd int) ([]string, error) {
	bp := direntBufs.Get().(*[]byte)
	defer direntBufs.Put(bp)
	var names []string
	for {
		n, err := retry(func() (int, error) { return unix.Getdents(fd, *bp) })
		if err != nil {
			return nil, err
		}
		if n <= 0 {
			return names, nil
		}
		_, _, names = unix.ParseDirent((*bp)[:n], -1, names)
	}
}

// dir records the folder open as fd (closed here) at rel, whose stat is
// self, and returns its listing's hash. The folder's record of the last
// scan (s.old[rel], its entries sorted by name) gives the hash of every
// file whose stat has not moved, and the listing's own hash when no entry
// changed (then nothing is encoded, hashed or asked of the store); when
// the folder's own stat has not moved either (a name made, removed or
// renamed in a folder moves its mtime and ctime, as git's untracked cache
// relies on; the racy rule holds), its names are the last scan's and the
// folder is not listed again.
func (s *scanState) dir(fd int, rel string, self statEntry, m *gitignore.Matcher, depth int) (Hash, error) {
	defer unix.Close(fd)
	if err := s.ctx.Err(); err != nil {
		return Hash{}, err
	}
	if depth > s.e.opts.MaxDepth {
		return Hash{}, fmt.Errorf("%w: %q is more than %d folders deep", ErrTooLarge, rel, s.e.opts.MaxDepth)
	}
	var old *dirRecord
	if s.old != nil {
		old = s.old[rel]
	}
	var names []string
	if old != nil && old.names != nil && old.self.ctime != -1 && old.self.sameStat(self) {
		names = old.names // sorted already; never changed in place
	} else {
		var err error
		if names, err = readNames(fd); err != nil {
			return Hash{}, fmt.Errorf("snapshot: listing %q: %w", rel, err)
		}
		sort.Strings(names)
	}
	if n := s.entries.Add(int64(len(names))); n > int64(s.e.opts.MaxEntries) {
		return Hash{}, fmt.Errorf("%w: more than %d entries", ErrTooLarge, s.e.opts.MaxEntries)
	}
	if self.ctime >= s.cutoff || self.mtime >= s.cutoff {
		self.ctime = -1 // racy: listed again next time
	}
	if !s.e.opts.NoIgnoreFiles {
		if _, found := slices.BinarySearch(names, ".gitignore"); found {
			m = m.Child(rel, readIgnore(fd, join(rel, ".gitignore")))
		}
	}
	oi := 0 // the next entry of old to look at
	prev := func(name string) (Entry, statEntry, bool) {
		if old == nil {
			return Entry{}, statEntry{}, false
		}
		for oi < len(old.entries) && old.entries[oi].Name < name {
			oi++
		}
		if oi < len(old.entries) && old.entries[oi].Name == name {
			return old.entries[oi], old.stats[oi], true
		}
		return Entry{}, statEntry{}, false
	}
	entries := make([]Entry, 0, len(names))
	stats := make([]statEntry, 0, len(names))
	var huge []string
	var linked []linkedFile
	type sub struct {
		i    int
		fd   int
		rel  string
		done <-chan error
		hash Hash
		self statEntry
	}
	var subs []*sub
	fail := func(err error) (Hash, error) {
		for _, sb := range subs {
			if sb.done != nil {
				<-sb.done
			} else {
				unix.Close(sb.fd)
			}
		}
		return Hash{}, err
	}
	for _, name := range names {
		var st unix.Stat_t
		if err := fstatat(fd, name, &st); err != nil {
			if errors.Is(err, unix.ENOENT) {
				continue // gone since the listing
			}
			return fail(fmt.Errorf("snapshot: %q: %w", join(rel, name), err))
		}
		kind := kindOf(st.Mode)
		if name == ".git" && kind == KindDir {
			continue
		}
		// The path is made only where it is needed: not for a file
		// unchanged, when nothing is excluded or ignored here.
		crel := ""
		if s.e.excluded != nil || m != nil || kind != KindFile {
			crel = join(rel, name)
			if (s.e.excluded != nil && s.e.excluded(crel)) || m.Ignored(crel, kind == KindDir) {
				continue
			}
		}
		en := Entry{Name: name, Kind: kind, Mode: st.Mode & 0o7777, Meta: true, UID: st.Uid, GID: st.Gid, Mtime: st.Mtim.Nano()}
		var se statEntry
		switch kind {
		case KindDir:
			sfd, err := retry(func() (int, error) {
				return unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
			})
			if err != nil {
				if errors.Is(err, unix.ENOENT) {
					continue
				}
				return fail(fmt.Errorf("snapshot: opening folder %q: %w", crel, err))
			}
			sb := &sub{i: len(entries), fd: sfd, rel: crel, self: statOf(&st)}
			subs = append(subs, sb)
			select {
			case s.sem <- struct{}{}:
				sm := m
				sb.done = guard.Go("snapshot walk", func() error {
					defer func() { <-s.sem }()
					h, err := s.dir(sfd, crel, sb.self, sm, depth+1)
					sb.hash = h
					return err
				}, nil)
			default:
			}
		case KindFile:
			se = statOf(&st)
			if pe, ps, ok := prev(name); ok && pe.Kind == KindFile && ps.sameStat(se) {
				se.hash, se.huge = pe.Hash, pe.Huge
			} else {
				if crel == "" {
					crel = join(rel, name)
				}
				h, huge, err := s.file(fd, name, crel, &se)
				if err != nil {
					if errors.Is(err, unix.ENOENT) {
						continue
					}
					return fail(err)
				}
				se.hash, se.huge = h, huge
			}
			if se.ctime >= s.cutoff || se.mtime >= s.cutoff {
				se.ctime = -1 // racy: hashed again next time
			}
			en.Size, en.Hash, en.Huge = se.size, se.hash, se.huge
			if se.huge {
				huge = append(huge, join(rel, name))
			}
			if st.Nlink > 1 {
				linked = append(linked, linkedFile{[2]uint64{st.Dev, st.Ino}, join(rel, name)})
			}
		case KindLink:
			// A link is never changed in place: the same stat is the same
			// target.
			se = statOf(&st)
			if pe, ps, ok := prev(name); ok && pe.Kind == KindLink && ps.sameStat(se) {
				en.Target = pe.Target
			} else {
				t, err := readlinkat(fd, name)
				if err != nil {
					if errors.Is(err, unix.ENOENT) {
						continue
					}
					return fail(fmt.Errorf("snapshot: reading link %q: %w", crel, err))
				}
				en.Target = t
			}
			if se.ctime >= s.cutoff || se.mtime >= s.cutoff {
				se.ctime = -1 // racy: read again next time
			}
			en.Mode = 0o777
		case KindCharDevice, KindBlockDevice:
			en.Rdev = uint64(st.Rdev)
		}
		entries = append(entries, en)
		stats = append(stats, se)
	}
	for _, sb := range subs {
		if sb.done == nil {
			h, err := s.dir(sb.fd, sb.rel, sb.self, m, depth+1)
			sb.fd = -1
			sb.done = closed
			if err != nil {
				return fail(err)
			}
			sb.hash = h
		}
	}
	var firstErr error
	for _, sb := range subs {
		if err := <-sb.done; err != nil && firstErr == nil {
			firstErr = err
		}
		entries[sb.i].Hash = sb.hash
	}
	if firstErr != nil {
		return Hash{}, firstErr
	}
	rec := &dirRecord{entries: entries, stats: stats, names: names, self: self}
	if old != nil && sameEntries(old.entries, entries) {
		rec.hash = old.hash // the listing the last scan stored
	} else {
		data := encodeTree(entries)
		rec.hash = Sum(data)
		if err := s.put(rec.hash, data); err != nil {
			return Hash{}, fmt.Errorf("snapshot: storing the listing of %q: %w", rel, err)
		}
	}
	s.mu.Lock()
	s.index[rel] = rec
	s.snap.Huge = append(s.snap.Huge, huge...)
	for _, l := range linked {
		if s.links == nil {
			s.links = map[[2]uint64][]string{}
		}
		s.links[l.id] = append(s.links[l.id], l.path)
	}
	s.mu.Unlock()
	return rec.hash, nil
}

// linkedFile is a file of more than one name: its device and inode, and
// one of its paths.
type linkedFile struct {
	id   [2]uint64
	path string
}

// closed is a channel that yields nil errors forever.
var closed = func() <-chan error { c := make(chan error); close(c); return c }()

// file hashes (and, under the bound, stores) the regular file name of
// folder fd; se is its stat, updated from the opened descriptor.
func (s *scanState) file(fd int, name, rel string, se *statEntry) (Hash, bool, error) {
	ffd, err := retry(func() (int, error) {
		return unix.Openat(fd, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err != nil {
		return Hash{}, false, fmt.Errorf("snapshot: opening %q: %w", rel, err)
	}
	defer unix.Close(ffd)
	var st unix.Stat_t
	if err := unix.Fstat(ffd, &st); err != nil {
		return Hash{}, false, fmt.Errorf("snapshot: %q: %w", rel, err)
	}
	if kindOf(st.Mode) != KindFile {
		return Hash{}, false, fmt.Errorf("snapshot: %q changed type during the scan", rel)
	}
	*se = statOf(&st)
	s.hashed.Add(1)
	if st.Size > s.e.opts.MaxBlobBytes {
		h, err := s.hugeHash(ffd, &st)
		if err != nil {
			return Hash{}, false, fmt.Errorf("snapshot: hashing %q: %w", rel, err)
		}
		return h, true, nil
	}
	data, err := readFile(ffd, st.Size, s.e.opts.MaxBlobBytes+1)
	if err != nil {
		return Hash{}, false, fmt.Errorf("snapshot: reading %q: %w", rel, err)
	}
	s.hbytes.Add(int64(len(data)))
	if int64(len(data)) > s.e.opts.MaxBlobBytes { // grew while read
		var st2 unix.Stat_t
		_ = unix.Fstat(ffd, &st2)
		h, err := s.hugeHash(ffd, &st2)
		if err != nil {
			return Hash{}, false, fmt.Errorf("snapshot: hashing %q: %w", rel, err)
		}
		*se = statOf(&st2)
		return h, true, nil
	}
	// The content read is what is recorded; a write during the read moves
	// the times, and the entry is marked racy so the next scan reads it.
	var after unix.Stat_t
	if unix.Fstat(ffd, &after) == nil && statOf(&after) != *se {
		*se = statOf(&after)
		se.ctime = -1
	}
	se.size = int64(len(data))
	h := Sum(data)
	if err := s.put(h, data); err != nil {
		return Hash{}, false, fmt.Errorf("snapshot: storing %q: %w", rel, err)
	}
	return h, false, nil
}

// readFile reads the file fd to its end, at most limit bytes, into a
// buffer of its stat's size (and one byte more, to see it grew): one
// allocation, no *os.File.
func readFile(fd int, size, limit int64) ([]byte, error) {
	buf := make([]byte, min(size+1, limit))
	n := 0
	for int64(n) < limit {
		if n == len(buf) { // it grew: read on, up to limit
			buf = append(buf, make([]byte, min(max(int64(len(buf)), 4096), limit-int64(n)))...)
		}
		m, err := unix.Read(fd, buf[n:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if m == 0 {
			break
		}
		n += m
	}
	return buf[:n], nil
}

// hugeHash hashes a file over the blob bound: its data extents (holes are
// skipped: a 5 GiB sparse file costs its data), at most MaxHashBytes of
// them; past that, its identity.
func (s *scanState) hugeHash(fd int, st *unix.Stat_t) (Hash, error) {
	d := sha256.New()
	var hdr [16]byte
	binary.LittleEndian.PutUint64(hdr[:8], uint64(st.Size))
	d.Write([]byte("extents\x00"))
	d.Write(hdr[:8])
	buf := make([]byte, 1<<20)
	var read int64
	off := int64(0)
	for off < st.Size {
		if err := s.ctx.Err(); err != nil {
			return Hash{}, err
		}
		data, err := unix.Seek(fd, off, unix.SEEK_DATA)
		if err != nil {
			if errors.Is(err, unix.ENXIO) {
				break // only a hole remains
			}
			data = off // no SEEK_DATA: read it all
		}
		hole, err := unix.Seek(fd, data, unix.SEEK_HOLE)
		if err != nil {
			hole = st.Size
		}
		binary.LittleEndian.PutUint64(hdr[:8], uint64(data))
		binary.LittleEndian.PutUint64(hdr[8:], uint64(hole))
		d.Write(hdr[:])
		for p := data; p < hole; {
			if read >= s.e.opts.MaxHashBytes {
				return identityHash(st), nil
			}
			n, err := unix.Pread(fd, buf[:min(int64(len(buf)), hole-p)], p)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return Hash{}, err
			}
			if n == 0 {
				break
			}
			d.Write(buf[:n])
			p += int64(n)
			read += int64(n)
		}
		off = hole
	}
	s.hbytes.Add(read)
	var h Hash
	d.Sum(h[:0])
	return h, nil
}

// identityHash stands for a file's content when it is too big to hash.
func identityHash(st *unix.Stat_t) Hash {
	var b [48]byte
	copy(b[:8], "identity")
	binary.LittleEndian.PutUint64(b[8:], uint64(st.Size))
	binary.LittleEndian.PutUint64(b[16:], uint64(st.Mtim.Nano()))
	binary.LittleEndian.PutUint64(b[24:], uint64(st.Ctim.Nano()))
	binary.LittleEndian.PutUint64(b[32:], st.Ino)
	binary.LittleEndian.PutUint64(b[40:], st.Dev)
	return Sum(b[:])
}

func statOf(st *unix.Stat_t) statEntry {
	return statEntry{size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino, dev: st.Dev, mode: st.Mode}
}

func (a statEntry) sameStat(b statEntry) bool {
	return a.size == b.size && a.mtime == b.mtime && a.ctime == b.ctime && a.ino == b.ino && a.dev == b.dev && a.mode == b.mode
}

func kindOf(mode uint32) Kind {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return KindFile
	case unix.S_IFDIR:
		return KindDir
	case unix.S_IFLNK:
		return KindLink
	case unix.S_IFIFO:
		return KindFIFO
	case unix.S_IFSOCK:
		return KindSocket
	case unix.S_IFCHR:
		return KindCharDevice
	case unix.S_IFBLK:
		return KindBlockDevice
	}
	return KindSocket
}

func fstatat(fd int, name string, st *unix.Stat_t) error {
	for {
		err := unix.Fstatat(fd, name, st, unix.AT_SYMLINK_NOFOLLOW)
		if err != unix.EINTR {
			return err
		}
	}
}

func readlinkat(fd int, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		n, err := unix.Readlinkat(fd, name, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
		if size >= 1<<16 {
			return "", fmt.Errorf("target longer than %d bytes", size)
		}
	}
}

// readIgnore reads the .gitignore of folder fd as internal/walk does: no
// link followed, no pipe waited on, regular files only, bounded.
func readIgnore(fd int, rel string) []byte {
	ffd, err := retry(func() (int, error) {
		return unix.Openat(fd, ".gitignore", unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	})
	if err != nil {
		if errors.Is(err, unix.ELOOP) {
			return walk.IgnoreData(nil, fs.ModeSymlink, rel)
		}
		return nil
	}
	f := os.NewFile(uintptr(ffd), rel)
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil
	}
	return walk.IgnoreData(f, info.Mode(), rel)
}
