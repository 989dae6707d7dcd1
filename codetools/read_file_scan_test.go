package codetools

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeSparseTail writes name: a text head longer than what binary
// sniffing looks at, then a sparse tail of NUL bytes up to size (no
// newline in it: one huge line).
func writeSparseTail(t testing.TB, dir, name string, headLines int, size int64) {
	t.Helper()
	f, err := os.Create(filepath.Join(dir, name))
	require.NoError(t, err)
	var sb strings.Builder
	for i := 1; i <= headLines; i++ {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	_, err = f.WriteString(sb.String())
	require.NoError(t, err)
	require.NoError(t, f.Truncate(size))
	require.NoError(t, f.Close())
}

// callWithin runs one tool call under a context deadline and fails the
// test if the call has not returned grace after that deadline: a scan
// that ignores the context fails instead of stalling the run.
func callWithin(t *testing.T, c *CodeTools, deadline, grace time.Duration, name string, args map[string]any) (string, time.Duration, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	done := make(chan answer, 1)
	start := time.Now()
	go func() {
		out, err := c.Resolve(ctx, llmtoolkit.Call{Name: name, Arguments: args})
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, time.Since(start), a.err
	case <-time.After(deadline + grace):
		t.Fatalf("%s %v still running %v after its %v deadline", name, args, grace, deadline)
		return "", 0, nil
	}
}

// TestReadFileSparseTailHonoursDeadline: a file with a short text head
// and a huge sparse tail (one line of NUL bytes) is scanned under the
// call's deadline, in each of read_file's three scans (skipping to offset,
// the lines shown, the count of the remaining lines) and in file_info's
// count of lines, and a deadline is reported as a timeout.
func TestReadFileSparseTailHonoursDeadline(t *testing.T) {
	dir, c := newTestTools(t)
	const headLines = 1500 // about 12 KiB: more than binary sniffing reads
	writeSparseTail(t, dir, "sparse.txt", headLines, 1<<40)
	for _, tt := range []struct {
		name, tool string
		args       map[string]any
	}{
		{"lines shown", "read_file", map[string]any{"path": "sparse.txt"}},
		{"skip to offset", "read_file", map[string]any{"path": "sparse.txt", "offset": headLines + 2}},
		{"count of the rest", "read_file", map[string]any{"path": "sparse.txt", "limit": 1}},
		{"file_info's count of lines", "file_info", map[string]any{"path": "sparse.txt"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			deadline := 300 * time.Millisecond
			_, took, err := callWithin(t, c, deadline, 10*time.Second, tt.tool, tt.args)
			t.Logf("returned after %v", took)
			require.Error(t, err)
			assert.True(t, errors.Is(err, context.DeadlineExceeded), "a timeout, not %v", err)
			assert.Contains(t, err.Error(), "timed out")
			assert.Contains(t, err.Error(), "sparse.txt")
		})
	}
}

// BenchmarkReadFileSkipLines reads 10 lines at the end of a 64 MiB file of
// short lines: the time is the skip to offset, line by line.
func BenchmarkReadFileSkipLines(b *testing.B) {
	dir, c := newTestTools(b)
	writeLinesFile(b, dir, "lines.txt", 64<<20)
	out := mustRun(b, c, "read_file", map[string]any{"path": "lines.txt", "limit": 1})
	var total int
	_, err := fmt.Sscanf(out[strings.Index(out, "[")+1:], "%d more lines", &total)
	require.NoError(b, err)
	call := llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "lines.txt", "offset": total - 9}}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Resolve(ctx, call); err != nil {
			b.Fatal(err)
		}
	}
}
