package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// Blobs is where a snapshot's blobs go: content-addressed, so that a Put
// of a hash already held stores nothing. The checkpoint package's store
// implements it (compressed, in SQL); tests use a map.
type Blobs interface {
	// Has reports whether the blob h is held.
	Has(ctx context.Context, h Hash) (bool, error)
	// Put stores data under h (the SHA-256 of data) unless held already.
	Put(ctx context.Context, h Hash, data []byte) error
	// Get returns the blob h, or an error matching [ErrMissingBlob].
	Get(ctx context.Context, h Hash) ([]byte, error)
}

// BatchBlobs is a [Blobs] that also answers for and stores many blobs at
// once: a scan then asks the store once per batch of new blobs, and
// writes them in one go, rather than two statements a blob.
type BatchBlobs interface {
	Blobs
	// Missing returns those of hs that are not held.
	Missing(ctx context.Context, hs []Hash) ([]Hash, error)
	// PutMany stores each blob unless held already.
	PutMany(ctx context.Context, blobs []Blob) error
	// GetMany returns the blobs of hs the store holds, by hash (one
	// missing is absent from the map, not an error).
	GetMany(ctx context.Context, hs []Hash) (map[Hash][]byte, error)
}

// Blob is one blob to store: Data under its SHA-256, Hash.
type Blob struct {
	Hash Hash
	Data []byte
}

// ErrMissingBlob is wrapped by the error for a blob the store does not
// hold.
var ErrMissingBlob = errors.New("snapshot: blob missing from the store")

// ErrTooLarge is wrapped by the error for a tree past [Options.MaxEntries]
// or [Options.MaxDepth].
var ErrTooLarge = errors.New("snapshot: tree too large")

// ErrUnsupported is returned where the platform has no engine (it needs
// Linux's *at system calls).
var ErrUnsupported = errors.New("snapshot: not supported on this platform")

// Defaults of [Options].
const (
	DefaultMaxBlobBytes = 16 << 20
	DefaultMaxHashBytes = 1 << 30
	DefaultMaxEntries   = 1 << 20
	DefaultMaxDepth     = 256
)

// Options bound and filter a snapshot.
type Options struct {
	// MaxBlobBytes: a file larger than this is recorded by size and hash
	// only (Huge); 0 is DefaultMaxBlobBytes.
	MaxBlobBytes int64
	// MaxHashBytes: of a Huge file, at most this many bytes of data
	// (holes are skipped) are hashed; past it the hash is of the file's
	// identity (size, times, inode), so any change still shows. 0 is
	// DefaultMaxHashBytes.
	MaxHashBytes int64
	// MaxEntries bounds the entries of a tree; 0 is DefaultMaxEntries.
	MaxEntries int
	// MaxDepth bounds how deep folders nest; 0 is DefaultMaxDepth.
	MaxDepth int
	// Excluded reports the root-relative, slash-separated paths the host
	// leaves out (never opened, never rewound). Nil leaves out nothing.
	Excluded func(rel string) bool
	// NoIgnoreFiles makes the walk record what .gitignore files ignore.
	NoIgnoreFiles bool
	// Workers is how many folders are read at once; 0 is GOMAXPROCS (2
	// at least).
	Workers int
}

func (o Options) withDefaults() Options {
	if o.MaxBlobBytes <= 0 {
		o.MaxBlobBytes = DefaultMaxBlobBytes
	}
	if o.MaxHashBytes <= 0 {
		o.MaxHashBytes = DefaultMaxHashBytes
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = DefaultMaxEntries
	}
	if o.MaxDepth <= 0 {
		o.MaxDepth = DefaultMaxDepth
	}
	if o.Excluded == nil {
		o.Excluded = func(string) bool { return false }
	}
	if o.Workers <= 0 {
		o.Workers = max(2, runtime.GOMAXPROCS(0))
	}
	return o
}

// Snapshot is what one scan found.
type Snapshot struct {
	// Tree is the hash of the root folder's listing.
	Tree Hash
	// Entries counts every name recorded (the root aside).
	Entries int
	// Hashed counts the files read this scan (the others had not moved),
	// HashedBytes their bytes.
	Hashed      int
	HashedBytes int64
	// Stored counts the blobs written to the store, StoredBytes their
	// (uncompressed) bytes.
	Stored      int
	StoredBytes int64
	// Huge lists the files recorded by hash and size only.
	Huge []string
	// Links is the hash of the tree's hard-link groups (a blob of
	// [EncodeLinks]: the paths of the tree that share a file), stored
	// beside the listings; a restore given it links them again.
	Links Hash
}

// Engine snapshots and restores one root. It keeps the stat index of its
// last scan, so that the next hashes only what moved. Its methods may be
// called from several goroutines; scans and restores run one at a time.
type Engine struct {
	root     string
	opts     Options
	excluded func(rel string) bool // Options.Excluded as given (nil: none)

	mu sync.Mutex
	// index holds the last scan's record of every folder, by
	// root-relative path ("" is the root).
	index map[string]*dirRecord
	// stored reports that the last scan stored its blobs (Files stores
	// none: the next Scan reads and stores everything again).
	stored bool
	now    func() time.Time
}

// dirRecord is what the engine keeps of a folder between scans: its
// entries as recorded (sorted by name), the stat of each file and link
// (parallel to entries; zero for the other kinds), its listing's hash,
// every name it held (sorted; the ignored and excluded too) and its own
// stat when listed (ctime -1: racy, list it again).
type dirRecord struct {
	entries []Entry
	stats   []statEntry
	hash    Hash
	names   []string
	self    statEntry
}

func sameEntries(a, b []Entry) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Name != b[i].Name || !a[i].same(b[i]) {
			return false
		}
	}
	return true
}

// statEntry is what the stat index holds of a file.
type statEntry struct {
	size, mtime, ctime int64
	ino, dev           uint64
	mode               uint32
	hash               Hash
	huge               bool
}

// New returns the engine of the folder root (made absolute and cleaned).
// Nothing is read until the first scan.
func New(root string, opts Options) (*Engine, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("snapshot: root %q: %w", root, err)
	}
	return &Engine{root: filepath.Clean(abs), opts: opts.withDefaults(), excluded: opts.Excluded, now: time.Now}, nil
}

// Root returns the engine's root folder.
func (e *Engine) Root() string { return e.root }

// racyMargin: a file whose ctime or mtime is this close to (or after) the
// start of the scan that saw it is hashed again by the next scan, since a
// write in the same clock tick would leave its times unchanged (git's
// "racy clean" rule; the kernel's file clock lags by up to a tick).
const racyMargin = 50 * time.Millisecond

// Scan records the tree under the root: it walks it, compares each file's
// stat with the index of the last scan, hashes only what moved, stores new
// blobs in b and returns the root listing's hash. The walk honours
// .gitignore files and Options.Excluded as codetools' walkers do, skips
// .git folders, never follows a symbolic link, never opens a pipe, socket
// or device (they are recorded), and stops at the bounds of Options.
func (e *Engine) Scan(ctx context.Context, b Blobs) (Snapshot, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.scan(ctx, b, true)
}

// Reset forgets the stat index, so that the next scan reads and stores
// every file again (as the first did). A host calls it when the blobs of
// the last scan may not have been kept (the checkpoint naming them was
// never saved, and a collection may remove them).
func (e *Engine) Reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.index, e.stored = nil, false
}

// Files scans the root as [Engine.Scan] does but stores nothing, and
// returns the content hash of every file recorded, by root-relative,
// slash-separated path. Between two calls, the files whose hash differs,
// or that one of the two lacks, are exactly those whose content changed,
// appeared or went; a file whose stat has not moved is not read again.
func (e *Engine) Files(ctx context.Context) (map[string]Hash, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.scan(ctx, discard{}, false); err != nil {
		return nil, err
	}
	out := make(map[string]Hash, len(e.index)*8)
	for dir, rec := range e.index {
		for _, en := range rec.entries {
			if en.Kind == KindFile {
				out[join(dir, en.Name)] = en.Hash
			}
		}
	}
	return out, nil
}

// discard is the store of [Engine.Files]: it holds every blob already, so
// nothing is written.
type discard struct{}

func (discard) Has(context.Context, Hash) (bool, error) { return true, nil }

func (discard) Put(context.Context, Hash, []byte) error { return nil }

func (discard) Get(context.Context, Hash) ([]byte, error) { return nil, ErrMissingBlob }
