package codetools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/search"
)

// grepWithin runs grep with a deadline and fails the test, instead of
// stalling the run, when the call outlives it by far.
func grepWithin(t *testing.T, ct *CodeTools, d time.Duration, args map[string]any) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	done := make(chan answer, 1)
	go func() {
		out, err := ct.Resolve(ctx, llmtoolkit.Call{Name: "grep", Arguments: args})
		done <- answer{out, err}
	}()
	select {
	case a := <-done:
		return a.out, a.err
	case <-time.After(d + 10*time.Second):
		t.Fatalf("grep %v still running %s after its %s deadline", args, 10*time.Second, d)
		return "", nil
	}
}

// negatedClassFile is the case for x[^q]*y: many lines with an x,
// a line with a y every hundred lines, no q anywhere and no matching line
// (a match would have to run across lines), size bytes in all.
func negatedClassFile(size int) []byte {
	chunk := strings.Repeat("an x in a line with text, no match here\n", 99) + "only a y on this line, the other letter is absent\n"
	data := []byte(strings.Repeat(chunk, size/len(chunk)+1))[:size]
	return data[:bytes.LastIndexByte(data, '\n')+1]
}

func TestGrepNegatedClassIsLinear(t *testing.T) {
	ct := newTools(t)
	root := ct.Root()
	for _, size := range []int{156 << 10, 1 << 20, 4 << 20} {
		name := fmt.Sprintf("f%d.txt", size)
		data := negatedClassFile(size)
		// one real match, in the last line but one
		data = append(data, "an x, then a y\nlast\n"...)
		require.NoError(t, os.WriteFile(filepath.Join(root, name), data, 0o644))
		want := fmt.Sprintf("%s:%d: an x, then a y", name, bytes.Count(data, []byte{'\n'})-1)
		for _, path := range []string{name, "."} {
			start := time.Now()
			got, err := grepWithin(t, ct, 20*time.Second, map[string]any{"pattern": "x[^q]*y", "path": path, "glob": name})
			require.NoError(t, err, "size %d path %q", size, path)
			assert.Equal(t, want, got)
			t.Logf("x[^q]*y over %d KiB (path %q): %s", size>>10, path, time.Since(start))
		}
	}
}

// expiringCtx is a context whose deadline passes after its Err was asked
// for a given number of times: a deadline that ends inside a search, at a
// known point.
type expiringCtx struct {
	context.Context
	left atomic.Int64
}

func (c *expiringCtx) Err() error {
	if c.left.Add(-1) < 0 {
		return context.DeadlineExceeded
	}
	return nil
}

func TestGrepTimeoutIsAnError(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	// three blocks of lines that do not match
	data := bytes.Repeat([]byte("nothing to see on this line\n"), 3*search.BlockMin/28+10)
	writeTestFiles(t, ct.Root(), map[string]string{"big.txt": string(data), "dir/big.txt": string(data)})
	for _, path := range []string{"big.txt", "dir"} {
		t.Run(path, func(t *testing.T) {
			ctx := &expiringCtx{Context: context.Background()}
			ctx.left.Store(2) // Resolve's check and the first block pass
			out, err := ct.Resolve(ctx, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{"pattern": "needle", "path": path}})
			require.Error(t, err, "answer %q", out)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotContains(t, err.Error(), "No matches")
		})
	}
}

// grepLineNumbers returns the numbers of the matching lines of an answer.
func grepLineNumbers(t *testing.T, answer string) []int {
	t.Helper()
	if answer == "No matches found" {
		return nil
	}
	var lines []int
	for _, l := range strings.Split(answer, "\n") {
		f := strings.SplitN(l, ":", 3)
		require.Len(t, f, 3, "answer line %q", l)
		n, err := strconv.Atoi(f[1])
		require.NoError(t, err)
		lines = append(lines, n)
	}
	return lines
}

func TestGrepEmptyMatchAtEnd(t *testing.T) {
	t.Parallel()
	tests := []struct {
		data, pattern string
		want          []int
	}{
		{"hello", "$", []int{1}},
		{"hello", `\s*$`, []int{1}},
		{"hello  ", `\s+$`, []int{1}},
		{"hello", `o$`, []int{1}},
		{"hello\n", "$", []int{1}},
		{"a\nhello", "^$", nil},
		{"a\n\n", "^$", []int{2}},
		{"a\nb", "$", []int{1, 2}},
		{"a\nb", `\z`, []int{1, 2}},
		{"a\nb", `(a|)$`, []int{1, 2}},
		{"\n", "^$", []int{1}},
		{"", "$", nil},
	}
	ct := newTools(t)
	for i, tt := range tests {
		name := fmt.Sprintf("%d_%q_%s", i, tt.data, tt.pattern)
		file := fmt.Sprintf("f%d.txt", i)
		require.NoError(t, os.WriteFile(filepath.Join(ct.Root(), file), []byte(tt.data), 0o644))
		t.Run(name, func(t *testing.T) {
			got, err := run(t, ct, "grep", map[string]any{"pattern": tt.pattern, "path": file})
			require.NoError(t, err)
			assert.Equal(t, tt.want, grepLineNumbers(t, got), "answer %q", got)
			t.Run("same as ripgrep", func(t *testing.T) {
				assert.Equal(t, testkit.RipgrepLines(t, tt.pattern, filepath.Join(ct.Root(), file)), grepLineNumbers(t, got))
			})
		})
	}
}

func TestGrepLinesLongerThanABlock(t *testing.T) {
	if testing.Short() {
		// 29 s under the race detector, with no goroutine of its own to
		// check: scripts/test.sh runs it in its pass without -race
		t.Skip("27 MiB of lines: not in -short")
	}
	ct := newTools(t)
	long := func(parts ...string) string { return strings.Join(parts, "") }
	a := func(n int) string { return strings.Repeat("a", n) }
	files := map[string]string{
		// b at the end of the first 8 MiB: b$ matched there before
		"end.txt": long(a(search.BlockMax-1), "b", strings.Repeat("c", 1<<20), "\nnext b\n"),
		// a needle across the 8 MiB mark: missed before
		"across.txt": long("before\n", a(search.BlockMax-3), "needle", a(1<<20), "\nafter\n"),
		// a match near the end of a 9 MiB line without a final newline
		"tail.txt": long("first\n", a(search.BlockMax+1<<20), "needle", a(5)),
	}
	writeTestFiles(t, ct.Root(), files)
	tests := []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"pattern": "b$", "path": "end.txt"}, "end.txt:2: next b"},
		{map[string]any{"pattern": "needle", "path": "across.txt"}, "across.txt:2: " + a(500) + "... [truncated]"},
		{map[string]any{"pattern": "ne+dle", "path": "across.txt", "context": 1},
			"across.txt-1- before\nacross.txt:2: " + a(500) + "... [truncated]\nacross.txt-3- after"},
		{map[string]any{"pattern": "aaa", "path": "across.txt", "literal": true, "context": 1},
			"across.txt-1- before\nacross.txt:2: " + a(500) + "... [truncated]\nacross.txt-3- after"},
		{map[string]any{"pattern": "after|before", "path": "across.txt", "context": 1},
			"across.txt:1: before\nacross.txt-2- " + a(500) + "... [truncated]\nacross.txt:3: after"},
		{map[string]any{"pattern": "dle a{5}$", "path": "tail.txt"}, "No matches found"},
		{map[string]any{"pattern": "dlea{5}$", "path": "tail.txt"}, "tail.txt:2: " + a(500) + "... [truncated]"},
		{map[string]any{"pattern": "^first$", "path": "tail.txt", "context": 2}, "tail.txt:1: first\ntail.txt-2- " + a(500) + "... [truncated]"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.args), func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			got, err := grepWithin(t, ct, 60*time.Second, tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			// the buffer grows to 8 MiB (1+2+4+8 MiB allocated); holding
			// a 9 MiB line whole would take a 16 MiB one more
			if !raceEnabled {
				assert.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(20<<20), "bytes allocated")
			}
		})
	}
}

func TestGrepPatternWithLineBreak(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	for _, args := range []map[string]any{
		{"pattern": `Foo\nbar`},
		{"pattern": "Foo\nbar"},
		{"pattern": "Foo\nbar", "literal": true},
		{"pattern": `foo\nbar`, "ignoreCase": true},
	} {
		_, err := run(t, ct, "grep", args)
		require.ErrorIs(t, err, search.ErrNewline, "args %v", args)
		assert.Contains(t, err.Error(), "one line at a time")
	}
	// classes lose their line break: nothing matches across lines
	for _, pattern := range []string{`package[^q]*Foo`, `(?s)package.*Foo`, `a\s+func`, `package a\z`} {
		got, err := run(t, ct, "grep", map[string]any{"pattern": pattern, "path": "a.go"})
		require.NoError(t, err)
		want := "No matches found"
		if strings.HasSuffix(pattern, `\z`) {
			want = "a.go:1: package a"
		}
		assert.Equal(t, want, got, "pattern %q", pattern)
	}
}
