package proc_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/proc"
)

// spillData returns n bytes where every 4-byte word holds its own index, so
// that any reordering shows.
func spillData(n int) []byte {
	b := make([]byte, (n+3)/4*4)
	for i := 0; i < len(b); i += 4 {
		binary.BigEndian.PutUint32(b[i:], uint32(i/4))
	}
	return b[:n]
}

// writeSpill writes data to a new spill file of the given limit in chunks
// of the given sizes (the last one repeated), finishes it and returns the
// file's content and the spill file.
func writeSpill(t testing.TB, limit int64, data []byte, chunks []int) ([]byte, *proc.SpillFile) {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), proc.SpillPattern)
	require.NoError(t, err)
	s := proc.NewSpillFile(f, limit)
	for i, rest := 0, data; len(rest) > 0; i++ {
		k := min(chunks[min(i, len(chunks)-1)], len(rest))
		n, err := s.Write(rest[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
		rest = rest[k:]
	}
	require.NoError(t, s.Finish())
	got, err := os.ReadFile(f.Name())
	require.NoError(t, err)
	return got, s
}

var spillMarkerRE = regexp.MustCompile(`^\n\n\[\.\.\. \S+ cut here: this file keeps the first \S+ and the last \S+ of \S+ \((\d+) bytes\) \.\.\.\]\n\n$`)

// spillLayout is what a spill file of the given limit keeps, as SpillFile
// documents: the first half, and a ring of the last bytes that leaves room
// for the marker.
func spillLayout(limit int64) (head, ring int) {
	h := limit / 2
	return int(h), int(limit - h - 256)
}

// checkSpill asserts that got is data whole, or its head, a marker naming
// the total size, and its tail, within the limit.
func checkSpill(t testing.TB, limit int64, data, got []byte, s *proc.SpillFile) {
	t.Helper()
	require.LessOrEqual(t, int64(len(got)), limit, "the file outgrew its cap")
	head, ring := spillLayout(limit)
	if len(data) <= head+ring {
		require.False(t, s.Cut())
		require.True(t, bytes.Equal(data, got), "the whole output, in order")
		return
	}
	require.True(t, s.Cut())
	require.Greater(t, len(got), head+ring)
	require.True(t, bytes.Equal(data[:head], got[:head]), "the head")
	require.True(t, bytes.Equal(data[len(data)-ring:], got[len(got)-ring:]), "the tail")
	m := spillMarkerRE.FindSubmatch(got[head : len(got)-ring])
	require.NotNil(t, m, "marker: %q", got[head:len(got)-ring])
	assert.Equal(t, strconv.Itoa(len(data)), string(m[1]))
}

func TestSpillFileKeepsHeadAndTail(t *testing.T) {
	t.Parallel()
	const limit = 64 << 10
	head, ring := spillLayout(limit)
	tests := []struct {
		name   string
		size   int
		chunks []int
	}{
		{"empty", 0, []int{1}},
		{"fits the head", head - 1, []int{100}},
		{"fits exactly", head + ring, []int{4096}},
		{"one byte over", head + ring + 1, []int{4096}},
		{"wraps the ring once", head + ring + ring/3, []int{1000}},
		{"wraps many times", 10 * limit, []int{777}},
		{"byte by byte over", head + ring + 17, []int{1}},
		{"one write bigger than the ring", 3 * limit, []int{3 * limit}},
		{"head then huge write", 5 * limit, []int{10, 4 * limit, 3}},
		{"ends exactly at the ring's end", head + 3*ring, []int{ring}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := spillData(tt.size)
			got, s := writeSpill(t, limit, data, tt.chunks)
			checkSpill(t, limit, data, got, s)
		})
	}
}

func FuzzSpillFile(f *testing.F) {
	f.Add(uint16(0), uint32(5000), []byte{1, 2, 3})
	f.Add(uint16(1000), uint32(100), []byte{255})
	f.Add(uint16(60000), uint32(200000), []byte{7, 0, 250, 13})
	f.Fuzz(func(t *testing.T, limitSeed uint16, size uint32, chunkSeeds []byte) {
		limit := int64(2*256+64) + int64(limitSeed%4096)
		size %= 1 << 18
		chunks := []int{1}
		for _, c := range chunkSeeds {
			chunks = append(chunks, 1+int(c)*int(c))
		}
		data := spillData(int(size))
		got, s := writeSpill(t, limit, data, chunks)
		checkSpill(t, limit, data, got, s)
	})
}

// newSpill makes a spill file in dir through the registry, writes to it and
// hands it back as finished.
func newSpill(t *testing.T, s *proc.SpillFiles, dir string, maxAge time.Duration, maxFiles int) string {
	t.Helper()
	f, err := s.Create(dir)
	require.NoError(t, err)
	_, err = f.WriteString("output")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	s.Keep(f.Name(), maxAge, maxFiles)
	return f.Name()
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

func TestSpillFilesRetention(t *testing.T) {
	t.Parallel()
	t.Run("at most maxFiles, oldest removed first", func(t *testing.T) {
		var s proc.SpillFiles
		dir := t.TempDir()
		a := newSpill(t, &s, dir, 0, 2)
		b := newSpill(t, &s, dir, 0, 2)
		c := newSpill(t, &s, dir, 0, 2)
		assert.False(t, exists(a))
		assert.True(t, exists(b))
		assert.True(t, exists(c))
		require.NoError(t, s.Close())
		assert.False(t, exists(b))
		assert.False(t, exists(c))
	})
	t.Run("removed after maxAge", func(t *testing.T) {
		var s proc.SpillFiles
		a := newSpill(t, &s, t.TempDir(), 100*time.Millisecond, 10)
		assert.True(t, exists(a))
		assert.Eventually(t, func() bool { return !exists(a) }, 10*time.Second, 10*time.Millisecond)
		require.NoError(t, s.Close())
	})
	t.Run("a folder is made", func(t *testing.T) {
		var s proc.SpillFiles
		dir := filepath.Join(t.TempDir(), "a", "b")
		a := newSpill(t, &s, dir, 0, 10)
		assert.Equal(t, dir, filepath.Dir(a))
		require.NoError(t, s.Close())
		assert.False(t, exists(a))
	})
	t.Run("after close: no new file, a late one removed", func(t *testing.T) {
		var s proc.SpillFiles
		dir := t.TempDir()
		f, err := s.Create(dir)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		require.NoError(t, s.Close())
		assert.True(t, exists(f.Name()), "still being written")
		s.Keep(f.Name(), 0, 10)
		assert.False(t, exists(f.Name()))
		_, err = s.Create(dir)
		require.ErrorIs(t, err, os.ErrClosed)
	})
}

func TestSpillFilesCloseReportsFailures(t *testing.T) {
	t.Parallel()
	var s proc.SpillFiles
	dir := t.TempDir()
	a := newSpill(t, &s, dir, 0, 10)
	// A non-empty folder in the file's place cannot be removed.
	require.NoError(t, os.Remove(a))
	require.NoError(t, os.MkdirAll(filepath.Join(a, "x"), 0o755))
	err := s.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), a)
	assert.Contains(t, err.Error(), "bash spill files")

	// A failure of the retention limits is kept and retried by close.
	var s2 proc.SpillFiles
	b := newSpill(t, &s2, dir, 0, 1)
	require.NoError(t, os.Remove(b))
	require.NoError(t, os.MkdirAll(filepath.Join(b, "x"), 0o755))
	c := newSpill(t, &s2, dir, 0, 1) // pushes b out: its removal fails
	err = s2.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), b)
	assert.False(t, exists(c))

	// The retry succeeds once the obstacle is gone.
	var s3 proc.SpillFiles
	d := newSpill(t, &s3, dir, 0, 1)
	require.NoError(t, os.Remove(d))
	require.NoError(t, os.MkdirAll(filepath.Join(d, "x"), 0o755))
	newSpill(t, &s3, dir, 0, 1)
	require.NoError(t, os.RemoveAll(filepath.Join(d, "x")))
	require.NoError(t, s3.Close())
	assert.False(t, exists(d))
}

// BenchmarkSpillFile1GiB writes 1 GiB in 32 KiB pieces (what bash's output
// reader does) to a spill file with the default cap.
func BenchmarkSpillFile1GiB(b *testing.B) {
	p := bytes.Repeat([]byte("y\n"), 16<<10)
	b.SetBytes(1 << 30)
	for b.Loop() {
		f, err := os.CreateTemp(b.TempDir(), proc.SpillPattern)
		require.NoError(b, err)
		s := proc.NewSpillFile(f, proc.DefaultSpillMaxBytes)
		for range (1 << 30) / len(p) {
			_, _ = s.Write(p)
		}
		require.NoError(b, s.Finish())
		info, err := os.Stat(f.Name())
		require.NoError(b, err)
		require.LessOrEqual(b, info.Size(), int64(proc.DefaultSpillMaxBytes))
	}
}
