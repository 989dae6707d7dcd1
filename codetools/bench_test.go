package codetools

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/require"
)

// writeLinesFile writes a text file of at least size bytes, of short
// numbered lines, and returns its path.
func writeLinesFile(t testing.TB, dir, name string, size int64) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	require.NoError(t, err)
	w := bufio.NewWriterSize(f, 1<<20)
	var written int64
	for i := 1; written < size; i++ {
		n, err := fmt.Fprintf(w, "line %d of the file\n", i)
		require.NoError(t, err)
		written += int64(n)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	return p
}

// allocatedBy returns the bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestReadFileBoundedMemory: reading the first lines of a file allocates
// the same, small amount whatever the file's size.
func TestReadFileBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 40 MB")
	}
	dir, c := newTestTools(t)
	writeLinesFile(t, dir, "small.txt", 4<<20)
	writeLinesFile(t, dir, "large.txt", 36<<20)
	read := func(name string) uint64 {
		return allocatedBy(func() {
			out := mustRun(t, c, "read_file", map[string]any{"path": name})
			require.Contains(t, out, "[Showing lines 1-2000 of ")
		})
	}
	small, large := read("small.txt"), read("large.txt")
	t.Logf("allocated: %d bytes for 4 MiB, %d bytes for 36 MiB", small, large)
	require.Less(t, large, uint64(4<<20))
	require.Less(t, large, small+256<<10, "allocations do not grow with the file")
}

// BenchmarkReadFileHead1GiB reads the first 2,000 lines of a 1 GiB file
// (LLMTOOLKIT_BENCH_READ_MIB sets another size): the time includes
// counting the file's lines for the notice; the allocations stay under
// 4 MiB whatever the size.
func BenchmarkReadFileHead1GiB(b *testing.B) {
	size := int64(1 << 30)
	if s := os.Getenv("LLMTOOLKIT_BENCH_READ_MIB"); s != "" {
		mib, err := strconv.Atoi(s)
		require.NoError(b, err)
		size = int64(mib) << 20
	}
	dir, c := newTestTools(b)
	p := writeLinesFile(b, dir, "huge.txt", size)
	b.Cleanup(func() { _ = os.Remove(p) })
	ctx := context.Background()
	call := llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "huge.txt"}}
	var allocated uint64
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		allocated += allocatedBy(func() {
			out, err := c.Resolve(ctx, call)
			if err != nil || !strings.Contains(out, "[Showing lines 1-2000 of ") {
				b.Fatalf("unexpected read: %v", err)
			}
		})
	}
	perOp := allocated / uint64(b.N)
	b.ReportMetric(float64(perOp), "alloc-bytes/op")
	if perOp >= 4<<20 {
		b.Fatalf("read_file allocated %d bytes per call, want < 4 MiB", perOp)
	}
}

// BenchmarkEditFile10MiB replaces one line in the middle of a 10 MiB file
// (read, match, atomic write, diff).
func BenchmarkEditFile10MiB(b *testing.B) {
	dir, c := newTestTools(b)
	var sb strings.Builder
	for i := 0; sb.Len() < 10<<20; i++ {
		if i == 200_000 {
			sb.WriteString("MARKER = A\n")
		}
		fmt.Fprintf(&sb, "line %d of the file\n", i)
	}
	require.NoError(b, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(sb.String()), 0o644))
	ctx := context.Background()
	calls := []llmtoolkit.Call{
		{Name: "edit_file", Arguments: map[string]any{"path": "big.txt", "oldText": "MARKER = A", "newText": "MARKER = B"}},
		{Name: "edit_file", Arguments: map[string]any{"path": "big.txt", "oldText": "MARKER = B", "newText": "MARKER = A"}},
	}
	b.ReportAllocs()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := c.Resolve(ctx, calls[i%2]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkTreeGoSource draws the tree of $(go env GOROOT)/src with the
// default depth and limit (sizes sum the whole tree).
func BenchmarkTreeGoSource(b *testing.B) {
	out, err := exec.Command("go", "env", "GOROOT").Output()
	if err != nil {
		b.Skip("no go command:", err)
	}
	c, err := New(filepath.Join(strings.TrimSpace(string(out)), "src"))
	require.NoError(b, err)
	defer c.Close()
	ctx := context.Background()
	call := llmtoolkit.Call{Name: "tree", Arguments: map[string]any{}}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, err := c.Resolve(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
