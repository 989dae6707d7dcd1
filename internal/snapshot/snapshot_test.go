//go:build linux

package snapshot_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/llmtoolkit/llmtoolkit/internal/snapshot"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// memBlobs is a map of blobs.
type memBlobs struct {
	mu   sync.Mutex
	m    map[snapshot.Hash][]byte
	puts int
}

func newMem() *memBlobs { return &memBlobs{m: map[snapshot.Hash][]byte{}} }

func (b *memBlobs) Has(_ context.Context, h snapshot.Hash) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	_, ok := b.m[h]
	return ok, nil
}

func (b *memBlobs) Put(_ context.Context, h snapshot.Hash, data []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if snapshot.Sum(data) != h {
		return fmt.Errorf("bad hash")
	}
	b.m[h] = append([]byte(nil), data...)
	b.puts++
	return nil
}

func (b *memBlobs) Get(_ context.Context, h snapshot.Hash) ([]byte, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	d, ok := b.m[h]
	if !ok {
		return nil, snapshot.ErrMissingBlob
	}
	return d, nil
}

// digest is the independent walker (filepath.WalkDir, see
// testkit.TreeLines): two trees are the same when their digests are.
func digest(t testing.TB, root string) string { return testkit.TreeLines(t, root) }

func write(t testing.TB, root string, files map[string]string) { testkit.WriteFiles(t, root, files) }

// settle waits out the racy margin, so that a scan trusts the stat of
// what was written before it.
func settle() { time.Sleep(60 * time.Millisecond) }

// batchBlobs is memBlobs answering and storing by batch, as the
// checkpoint store does.
type batchBlobs struct {
	*memBlobs
	batches int
	gets    int // single Gets
}

func (b *batchBlobs) Get(ctx context.Context, h snapshot.Hash) ([]byte, error) {
	b.gets++
	return b.memBlobs.Get(ctx, h)
}

func (b *batchBlobs) Missing(ctx context.Context, hs []snapshot.Hash) ([]snapshot.Hash, error) {
	var out []snapshot.Hash
	for _, h := range hs {
		if ok, _ := b.Has(ctx, h); !ok {
			out = append(out, h)
		}
	}
	return out, nil
}

func (b *batchBlobs) PutMany(ctx context.Context, list []snapshot.Blob) error {
	b.batches++
	for _, x := range list {
		if err := b.Put(ctx, x.Hash, x.Data); err != nil {
			return err
		}
	}
	return nil
}

func (b *batchBlobs) GetMany(ctx context.Context, hs []snapshot.Hash) (map[snapshot.Hash][]byte, error) {
	b.batches++
	out := map[snapshot.Hash][]byte{}
	for _, h := range hs {
		if d, err := b.memBlobs.Get(ctx, h); err == nil {
			out[h] = d
		}
	}
	return out, nil
}

func TestScanHashesOnlyWhatMoved(t *testing.T) {
	for name, newStore := range map[string]func() snapshot.Blobs{
		"one by one": func() snapshot.Blobs { return newMem() },
		"by batch":   func() snapshot.Blobs { return &batchBlobs{memBlobs: newMem()} },
	} {
		t.Run(name, func(t *testing.T) { scanHashesOnlyWhatMoved(t, newStore()) })
	}
}

func scanHashesOnlyWhatMoved(t *testing.T, b snapshot.Blobs) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/sub/c.txt": "c"})
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	first, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, 3, first.Hashed)
	assert.Equal(t, 5, first.Entries)

	again, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, first.Tree, again.Tree)
	assert.Zero(t, again.Hashed, "nothing moved: nothing read")
	assert.Zero(t, again.Stored)

	require.NoError(t, os.WriteFile(filepath.Join(root, "dir/sub/c.txt"), []byte("C"), 0o644))
	moved, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.NotEqual(t, first.Tree, moved.Tree)
	assert.Equal(t, 1, moved.Hashed)
	assert.Equal(t, 4, moved.Stored, "the file and the three listings above it")

	changes, truncated, err := snapshot.Diff(ctx, b, first.Tree, moved.Tree, 0)
	require.NoError(t, err)
	assert.False(t, truncated)
	require.Len(t, changes, 1)
	assert.Equal(t, "dir/sub/c.txt", changes[0].Path)
	assert.Equal(t, snapshot.OpModified, changes[0].Op)
}

func TestScanSeesSameSizeWriteInTheSameTick(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"f": "one"})
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := newMem()
	s1, err := e.Scan(context.Background(), b)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "f"), []byte("two"), 0o644))
	// Put the times back: only ctime (and the racy rule) can tell.
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(root, "f"), old, old))
	s2, err := e.Scan(context.Background(), b)
	require.NoError(t, err)
	assert.NotEqual(t, s1.Tree, s2.Tree)
}

// hostile builds a tree with the shapes a tool can leave behind.
func hostile(t *testing.T, root, outside string) {
	write(t, root, map[string]string{
		"plain.txt":            "plain\n",
		"name\nwith newline":   "newline\n",
		"dir/inner.go":         "package dir\n",
		"dir/deeper/x.bin":     "\x00\x01\x02",
		".gitignore":           "ignored/\n*.log\n",
		"ignored/big.txt":      "ignored",
		"app.log":              "log",
		".git/HEAD":            "ref: refs/heads/main\n",
		"readonly/keep.txt":    "keep",
		"exec/run.sh":          "#!/bin/sh\n",
		"node_modules/pkg.js":  "excluded",
		"dir/deeper/empty/.ok": "",
	})
	require.NoError(t, os.Mkdir(filepath.Join(root, "empty"), 0o750))
	require.NoError(t, os.Chmod(filepath.Join(root, "exec/run.sh"), 0o755|fs.ModeSetgid))
	require.NoError(t, os.Symlink(outside, filepath.Join(root, "out-link")))
	require.NoError(t, os.Symlink("dir/inner.go", filepath.Join(root, "in-link")))
	require.NoError(t, os.Symlink("missing", filepath.Join(root, "dangling")))
	require.NoError(t, syscall.Mkfifo(filepath.Join(root, "fifo"), 0o640))
	require.NoError(t, os.Chmod(filepath.Join(root, "readonly"), 0o555))
	t.Cleanup(func() { _ = os.Chmod(filepath.Join(root, "readonly"), 0o755) })
}

func excludeNodeModules(rel string) bool {
	return rel == "node_modules" || strings.HasPrefix(rel, "node_modules/")
}

func TestRestoreRoundTrip(t *testing.T) {
	for name, newStore := range map[string]func() snapshot.Blobs{
		"one by one": func() snapshot.Blobs { return newMem() },
		"by batch":   func() snapshot.Blobs { return &batchBlobs{memBlobs: newMem()} },
	} {
		t.Run(name, func(t *testing.T) { restoreRoundTrip(t, newStore()) })
	}
}

// TestRestoreFetchesByBatch: a restore of 700 files from a BatchBlobs
// store reads their contents a window at a time (a few GetMany, not one
// query a file); a content the store lost is skipped and named, and the
// files after it still come from the windows.
func TestRestoreFetchesByBatch(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	files := map[string]string{}
	for i := range 700 {
		files[fmt.Sprintf("d%d/f%03d", i%7, i)] = fmt.Sprintf("content %d\n", i)
	}
	write(t, root, files)
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := &batchBlobs{memBlobs: newMem()}
	a, err := e.Scan(ctx, b)
	require.NoError(t, err)
	for i := range 7 {
		require.NoError(t, os.RemoveAll(filepath.Join(root, fmt.Sprintf("d%d", i))))
	}
	b.mu.Lock()
	delete(b.m, snapshot.Sum([]byte("content 350\n")))
	b.mu.Unlock()
	b.batches, b.gets = 0, 0
	r, err := e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	require.Len(t, r.Skipped, 1)
	assert.Equal(t, "d0/f350", r.Skipped[0].Path)
	assert.Contains(t, r.Skipped[0].Reason, "no longer in the store")
	assert.False(t, r.Exact)
	got := 0
	for p, want := range files {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(p)))
		if p == "d0/f350" {
			assert.Error(t, err)
			continue
		}
		require.NoError(t, err)
		assert.Equal(t, want, string(data))
		got++
	}
	assert.Equal(t, 699, got)
	assert.GreaterOrEqual(t, b.batches, 3, "700 contents, 256 a window")
	assert.LessOrEqual(t, b.batches, 8, "the contents come a window at a time, the 7 folders' listings in one (and the after-scan stores nothing new)")
	assert.LessOrEqual(t, b.gets, 6, "single reads are the root's listings, the diff's of the folders come by batch, and the lost content")
}

func restoreRoundTrip(t *testing.T, b snapshot.Blobs) {
	ctx := context.Background()
	root, outside := t.TempDir(), t.TempDir()
	write(t, outside, map[string]string{"secret": "outside"})
	hostile(t, root, outside)
	e, err := snapshot.New(root, snapshot.Options{Excluded: excludeNodeModules})
	require.NoError(t, err)
	a, err := e.Scan(ctx, b)
	require.NoError(t, err)
	wantA := digest(t, root)

	// Turn it inside out.
	require.NoError(t, os.Chmod(filepath.Join(root, "readonly"), 0o755))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "dir")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "dir"), []byte("now a file"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(root, "plain.txt")))
	require.NoError(t, os.Mkdir(filepath.Join(root, "plain.txt"), 0o700))
	write(t, root, map[string]string{"plain.txt/in": "x", "new/deep/file": "new", "readonly/added": "a"})
	require.NoError(t, os.Chmod(filepath.Join(root, "exec/run.sh"), 0o600))
	require.NoError(t, os.Remove(filepath.Join(root, "in-link")))
	require.NoError(t, os.Symlink("elsewhere", filepath.Join(root, "in-link")))
	require.NoError(t, os.Remove(filepath.Join(root, "fifo")))
	require.NoError(t, os.WriteFile(filepath.Join(root, "fifo"), []byte("a file now"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, "name\nwith newline")))
	require.NoError(t, os.Chmod(filepath.Join(root, "empty"), 0o500))
	write(t, root, map[string]string{"node_modules/other.js": "excluded", "more.log": "ignored"})
	bTree, err := e.Scan(ctx, b)
	require.NoError(t, err)
	wantB := digest(t, root)
	require.NotEqual(t, wantA, wantB)

	dry, err := e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{DryRun: true})
	require.NoError(t, err)
	assert.NotEmpty(t, dry.Changes)
	assert.Equal(t, wantB, digest(t, root), "a dry run writes nothing")

	r, err := e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.True(t, r.Exact, "skipped: %v", r.Skipped)
	assert.Equal(t, bTree.Tree, r.Before.Tree)
	got := digest(t, root)
	// The excluded and ignored files added after A are left alone.
	assert.Contains(t, got, `"node_modules/other.js"`)
	assert.Contains(t, got, `"more.log"`)
	require.NoError(t, os.Remove(filepath.Join(root, "node_modules/other.js")))
	require.NoError(t, os.Remove(filepath.Join(root, "more.log")))
	assert.Equal(t, wantA, digest(t, root))
	data, err := os.ReadFile(filepath.Join(outside, "secret"))
	require.NoError(t, err)
	assert.Equal(t, "outside", string(data), "the link out of the root was never followed")

	write(t, root, map[string]string{"node_modules/other.js": "excluded", "more.log": "ignored"})
	forward, err := e.Restore(ctx, b, r.Before.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.True(t, forward.Exact)
	assert.Equal(t, wantB, digest(t, root))
}

func TestRestoreDeniedWritesNothing(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{"a": "1", "secret/key": "k"})
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := newMem()
	s, err := e.Scan(ctx, b)
	require.NoError(t, err)
	write(t, root, map[string]string{"a": "2", "secret/key": "changed"})
	before := digest(t, root)
	_, err = e.Restore(ctx, b, s.Tree, snapshot.RestoreOptions{Allow: func(c snapshot.Change) error {
		if strings.HasPrefix(c.Path, "secret/") {
			return fmt.Errorf("denied by rule secret/**")
		}
		return nil
	}})
	require.ErrorIs(t, err, snapshot.ErrDenied)
	assert.Contains(t, err.Error(), "secret/key")
	assert.Equal(t, before, digest(t, root))
}

func TestHugeAndSparseFiles(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	f, err := os.Create(filepath.Join(root, "sparse"))
	require.NoError(t, err)
	require.NoError(t, f.Truncate(5<<30))
	_, err = f.WriteAt([]byte("data"), 3<<30)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	e, err := snapshot.New(root, snapshot.Options{MaxBlobBytes: 1 << 20})
	require.NoError(t, err)
	b := newMem()
	start := time.Now()
	s, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Less(t, time.Since(start), 20*time.Second, "holes are not read")
	assert.Equal(t, []string{"sparse"}, s.Huge)
	for _, d := range b.m {
		assert.Less(t, len(d), 1<<20, "no blob holds the huge file")
	}
	f, err = os.OpenFile(filepath.Join(root, "sparse"), os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt([]byte("DATA"), 3<<30)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s2, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.NotEqual(t, s.Tree, s2.Tree, "a change in a huge file shows")
	r, err := e.Restore(ctx, b, s.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	require.Len(t, r.Skipped, 1)
	assert.Equal(t, "sparse", r.Skipped[0].Path)
	assert.Contains(t, r.Skipped[0].Reason, "size bound")
	assert.False(t, r.Exact)
}

func TestBounds(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{"a/b/c/d/e/f": "x", "g": "y", "h": "z"})
	e, err := snapshot.New(root, snapshot.Options{MaxDepth: 3})
	require.NoError(t, err)
	_, err = e.Scan(ctx, newMem())
	require.ErrorIs(t, err, snapshot.ErrTooLarge)
	e, err = snapshot.New(root, snapshot.Options{MaxEntries: 4})
	require.NoError(t, err)
	_, err = e.Scan(ctx, newMem())
	require.ErrorIs(t, err, snapshot.ErrTooLarge)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	e, err = snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	_, err = e.Scan(cctx, newMem())
	require.ErrorIs(t, err, context.Canceled)
}

func TestManyFiles(t *testing.T) {
	n := 2_000
	if os.Getenv("LLMTOOLKIT_STRESS") == "1" && !testing.Short() {
		n = 100_000
	}
	ctx := context.Background()
	root := t.TempDir()
	for i := range n {
		dir := filepath.Join(root, fmt.Sprintf("d%03d", i%500))
		if i < 500 {
			require.NoError(t, os.Mkdir(dir, 0o755))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%d", i)), []byte(fmt.Sprint(i)), 0o644))
	}
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := newMem()
	s, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, n+500, s.Entries)
	start := time.Now()
	s2, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Zero(t, s2.Hashed)
	t.Logf("%d files: first scan hashed %d, rescan %v", n, s.Hashed, time.Since(start))
	require.NoError(t, os.RemoveAll(filepath.Join(root, "d007")))
	r, err := e.Restore(ctx, b, s.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.True(t, r.Exact)
	assert.Len(t, r.Changes, n/500+1)
}

func FuzzDecodeTree(f *testing.F) {
	ctx := context.Background()
	root := f.TempDir()
	write(f, root, map[string]string{"a": "1", "b\nc": "2", "d/e": "3"})
	_ = os.Symlink("a", filepath.Join(root, "l"))
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(f, err)
	b := newMem()
	s, err := e.Scan(ctx, b)
	require.NoError(f, err)
	f.Add(b.m[s.Tree])
	f.Fuzz(func(t *testing.T, data []byte) {
		h := snapshot.Sum(data)
		mb := newMem()
		require.NoError(t, mb.Put(ctx, h, data))
		entries, err := snapshot.ReadTree(ctx, mb, h)
		if err != nil {
			return
		}
		for _, en := range entries {
			assert.NotContains(t, en.Name, "/")
			assert.NotEmpty(t, en.Name)
		}
	})
}

// TestFilesStoresNothing: Files gives every file's content hash without a
// store; between two calls exactly the changed, added and removed files
// differ.
func TestFilesStoresNothing(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.txt": "a", "dir/b.txt": "b", "dir/c.txt": "c"})
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	before, err := e.Files(ctx)
	require.NoError(t, err)
	assert.Equal(t, snapshot.Sum([]byte("a")), before["a.txt"])
	assert.Len(t, before, 3)
	write(t, root, map[string]string{"dir/b.txt": "B", "new.txt": "n", "a.txt": "a"})
	require.NoError(t, os.Remove(filepath.Join(root, "dir/c.txt")))
	after, err := e.Files(ctx)
	require.NoError(t, err)
	var differ []string
	for p, h := range after {
		if before[p] != h {
			differ = append(differ, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			differ = append(differ, p)
		}
	}
	assert.ElementsMatch(t, []string{"dir/b.txt", "new.txt", "dir/c.txt"}, differ, "a.txt rewritten with the same bytes is not a change")
}

// TestScanAfterFilesStoresEverything: Files stores nothing, so a Scan of
// the same engine after it stores every blob (it cannot trust an index
// whose blobs were never written); so does a Scan after Reset. Every
// blob the tree names is then held.
func TestScanAfterFilesStoresEverything(t *testing.T) {
	root := t.TempDir()
	write(t, root, map[string]string{"a.txt": "a", "dir/b.txt": "b"})
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	ctx := context.Background()
	_, err = e.Files(ctx)
	require.NoError(t, err)
	b := newMem()
	s, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.Equal(t, 5, s.Stored, "two files, two listings and the (empty) hard-link groups")
	flat, err := snapshot.Flatten(ctx, b, s.Tree)
	require.NoError(t, err)
	assert.Len(t, flat, 3)

	other := newMem()
	e.Reset()
	s, err = e.Scan(ctx, other)
	require.NoError(t, err)
	assert.Equal(t, 5, s.Stored, "after Reset, all again")
	assert.Equal(t, 2, s.Hashed)
}

// TestRestoreOwnersAndTimes: a restore puts back the modification time of
// files, folders and links (a link's own) and, where the process may (as
// root), their owners; a file written again with the same bytes is a
// change of time only (OpMeta).
func TestRestoreOwnersAndTimes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{"dir/a.txt": "a", "dir/b.txt": "b", "c.txt": "c"})
	require.NoError(t, os.Symlink("c.txt", filepath.Join(root, "link")))
	old := time.Date(2020, 1, 2, 3, 4, 5, 600, time.UTC)
	for _, p := range []string{"dir/a.txt", "dir/b.txt", "c.txt", "dir"} {
		require.NoError(t, os.Chtimes(filepath.Join(root, p), old, old))
	}
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, unix.NsecToTimespec(old.UnixNano())}
	require.NoError(t, unix.UtimesNanoAt(unix.AT_FDCWD, filepath.Join(root, "link"), ts, unix.AT_SYMLINK_NOFOLLOW))
	asRoot := os.Geteuid() == 0
	if asRoot {
		require.NoError(t, os.Lchown(filepath.Join(root, "dir/b.txt"), 1234, 5678))
		require.NoError(t, os.Lchown(filepath.Join(root, "link"), 1234, 5678))
	}
	lines := func() string {
		var out []string
		for _, p := range []string{"dir", "dir/a.txt", "dir/b.txt", "c.txt", "link"} {
			var st unix.Stat_t
			require.NoError(t, unix.Lstat(filepath.Join(root, p), &st))
			out = append(out, fmt.Sprintf("%s %d %d:%d", p, st.Mtim.Nano(), st.Uid, st.Gid))
		}
		return strings.Join(out, "\n")
	}
	want := lines()
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := newMem()
	a, err := e.Scan(ctx, b)
	require.NoError(t, err)

	write(t, root, map[string]string{"dir/a.txt": "a"}) // the same bytes: a new time
	require.NoError(t, os.WriteFile(filepath.Join(root, "dir/new.txt"), []byte("n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(root, "link")))
	require.NoError(t, os.Symlink("c.txt", filepath.Join(root, "link")))
	if asRoot {
		require.NoError(t, os.Lchown(filepath.Join(root, "dir/b.txt"), 0, 0))
	}
	require.NotEqual(t, want, lines())
	changed, err := e.Scan(ctx, b)
	require.NoError(t, err)
	changes, _, err := snapshot.Diff(ctx, b, a.Tree, changed.Tree, 0)
	require.NoError(t, err)
	ops := map[string]snapshot.Op{}
	for _, c := range changes {
		ops[c.Path] = c.Op
	}
	assert.Equal(t, snapshot.OpMeta, ops["dir/a.txt"], "same bytes, new time")
	assert.Equal(t, snapshot.OpAdded, ops["dir/new.txt"])
	assert.NotContains(t, ops, "dir", "the folder's time follows from what changed in it")

	r, err := e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.Empty(t, r.Skipped)
	assert.True(t, r.Exact)
	assert.Equal(t, want, lines())
	if !asRoot {
		t.Log("not root: owners were not changed, so none was restored")
	}
}

// TestRestoreToAListingWithoutOwnersOrTimes: a checkpoint written before
// owners and times were recorded (listings of format 1) still restores,
// exactly as far as it recorded: contents and modes; times stay as
// they are.
func TestRestoreToAListingWithoutOwnersOrTimes(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	b := newMem()
	put := func(data []byte) snapshot.Hash {
		h := snapshot.Sum(data)
		require.NoError(t, b.Put(ctx, h, data))
		return h
	}
	// Format 1, as llmtoolkit wrote it: magic, count, then per entry kind,
	// flags, mode, name, and a file's size and hash.
	v1 := func(entries ...[]byte) []byte {
		out := append([]byte("llmtoolkit-tree-1\n"), byte(len(entries)))
		for _, e := range entries {
			out = append(out, e...)
		}
		return out
	}
	file := func(name string, mode uint32, content string) []byte {
		h := put([]byte(content))
		e := []byte{byte(snapshot.KindFile), 0}
		e = binary.AppendUvarint(e, uint64(mode))
		e = binary.AppendUvarint(e, uint64(len(name)))
		e = append(e, name...)
		e = binary.AppendUvarint(e, uint64(len(content)))
		return append(e, h[:]...)
	}
	folder := func(name string, mode uint32, listing snapshot.Hash) []byte {
		e := []byte{byte(snapshot.KindDir), 0}
		e = binary.AppendUvarint(e, uint64(mode))
		e = binary.AppendUvarint(e, uint64(len(name)))
		e = append(e, name...)
		return append(e, listing[:]...)
	}
	sub := put(v1(file("b.txt", 0o600, "bee\n")))
	tree := put(v1(file("a.txt", 0o644, "ay\n"), folder("dir", 0o755, sub)))
	entries, err := snapshot.ReadTree(ctx, b, tree)
	require.NoError(t, err)
	require.Len(t, entries, 2)
	assert.False(t, entries[0].Meta)

	write(t, root, map[string]string{"a.txt": "changed", "other.txt": "gone after"})
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	r, err := e.Restore(ctx, b, tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.True(t, r.Exact, "equal as far as the old listing recorded")
	assert.Equal(t, "\"a.txt\" ---------- 644 "+hexSum("ay\n")+"\n\"dir\" d--------- 755\n\"dir/b.txt\" ---------- 600 "+hexSum("bee\n"), digest(t, root))
	changes, _, err := snapshot.Diff(ctx, b, tree, r.After.Tree, 0)
	require.NoError(t, err)
	assert.Empty(t, changes, "an old listing and a new one of the same files differ in nothing")
}

func hexSum(s string) string { return snapshot.Sum([]byte(s)).String() }

// TestRestoreHardLinks: a scan records which paths name one file
// (Snapshot.Links); a restore given them links those paths again, makes
// files linked since separate again, and is exact only when the links
// are as recorded.
func TestRestoreHardLinks(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	write(t, root, map[string]string{"a.txt": "shared\n", "x.txt": "same\n", "y.txt": "same\n"})
	p := func(rel string) string { return filepath.Join(root, rel) }
	require.NoError(t, os.MkdirAll(p("dir"), 0o755))
	require.NoError(t, os.Link(p("a.txt"), p("b.txt")))
	require.NoError(t, os.Link(p("a.txt"), p("dir/c.txt")))
	ino := func(rel string) uint64 {
		var st unix.Stat_t
		require.NoError(t, unix.Lstat(p(rel), &st))
		return st.Ino
	}
	settle()
	e, err := snapshot.New(root, snapshot.Options{})
	require.NoError(t, err)
	b := newMem()
	a, err := e.Scan(ctx, b)
	require.NoError(t, err)
	groups, err := snapshot.ReadLinks(ctx, b, a.Links)
	require.NoError(t, err)
	assert.Equal(t, [][]string{{"a.txt", "b.txt", "dir/c.txt"}}, groups)
	want := digest(t, root)

	// b.txt made separate (same bytes), y.txt linked to x.txt (same
	// bytes), a new link to a.txt.
	require.NoError(t, os.Remove(p("b.txt")))
	require.NoError(t, os.WriteFile(p("b.txt"), []byte("shared\n"), 0o644))
	require.NoError(t, os.Remove(p("y.txt")))
	require.NoError(t, os.Link(p("x.txt"), p("y.txt")))
	require.NoError(t, os.Link(p("a.txt"), p("d.txt")))
	changed, err := e.Scan(ctx, b)
	require.NoError(t, err)
	assert.NotEqual(t, a.Links, changed.Links)

	r, err := e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{Links: a.Links})
	require.NoError(t, err)
	assert.Empty(t, r.Skipped)
	assert.True(t, r.Exact)
	assert.Equal(t, a.Links, r.After.Links)
	assert.Equal(t, want, digest(t, root))
	assert.Equal(t, ino("a.txt"), ino("b.txt"), "linked again")
	assert.Equal(t, ino("a.txt"), ino("dir/c.txt"))
	assert.NotEqual(t, ino("x.txt"), ino("y.txt"), "made separate again")
	assert.NoFileExists(t, p("d.txt"))

	// Without the groups (a checkpoint recorded before them), links are
	// left as they are (and the two names cannot have two times).
	require.NoError(t, os.Remove(p("y.txt")))
	require.NoError(t, os.Link(p("x.txt"), p("y.txt")))
	_, err = e.Restore(ctx, b, a.Tree, snapshot.RestoreOptions{})
	require.NoError(t, err)
	assert.Equal(t, want, digest(t, root))
	assert.Equal(t, ino("x.txt"), ino("y.txt"))
}

// TestScanListsAFolderAgainOnlyWhenItMoved: a folder whose stat has not
// moved is not listed again, so its names come from the last scan; a name
// made, removed or renamed in it is still seen when its times are put
// back (its ctime tells), and a name its .gitignore stops ignoring (an
// edit in place, the folder untouched) is seen too.
func TestScanListsAFolderAgainOnlyWhenItMoved(t *testing.T) {
	for name, tc := range map[string]struct {
		change func(t *testing.T, dir string)
		want   []string
	}{
		"made":    {func(t *testing.T, dir string) { write(t, dir, map[string]string{"new.txt": "new"}) }, []string{"added dir/new.txt"}},
		"removed": {func(t *testing.T, dir string) { require.NoError(t, os.Remove(filepath.Join(dir, "a.txt"))) }, []string{"removed dir/a.txt"}},
		"renamed": {func(t *testing.T, dir string) {
			require.NoError(t, os.Rename(filepath.Join(dir, "a.txt"), filepath.Join(dir, "z.txt")))
		}, []string{"added dir/z.txt", "removed dir/a.txt"}},
		"unignored": {func(t *testing.T, dir string) {
			f, err := os.OpenFile(filepath.Join(dir, ".gitignore"), os.O_WRONLY|os.O_TRUNC, 0)
			require.NoError(t, err)
			_, err = f.WriteString("# nothing\n")
			require.NoError(t, err)
			require.NoError(t, f.Close())
		}, []string{"added dir/app.log", "modified dir/.gitignore"}},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "dir")
			write(t, root, map[string]string{"dir/a.txt": "a", "dir/.gitignore": "*.log\n", "dir/app.log": "log"})
			old := time.Now().Add(-time.Hour)
			require.NoError(t, os.Chtimes(dir, old, old))
			settle()
			e, err := snapshot.New(root, snapshot.Options{})
			require.NoError(t, err)
			ctx, b := context.Background(), newMem()
			first, err := e.Scan(ctx, b)
			require.NoError(t, err)
			again, err := e.Scan(ctx, b)
			require.NoError(t, err)
			require.Equal(t, first.Tree, again.Tree)

			tc.change(t, dir)
			require.NoError(t, os.Chtimes(dir, old, old)) // only ctime can tell
			moved, err := e.Scan(ctx, b)
			require.NoError(t, err)
			changes, _, err := snapshot.Diff(ctx, b, first.Tree, moved.Tree, 0)
			require.NoError(t, err)
			var got []string
			for _, c := range changes {
				if c.Path != "dir" {
					got = append(got, string(c.Op)+" "+c.Path)
				}
			}
			assert.ElementsMatch(t, tc.want, got)
		})
	}
}
