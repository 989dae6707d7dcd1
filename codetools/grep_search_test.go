package codetools

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
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
	data := bytes.Repeat([]byte("nothing to see on this line\n"), 3*grepBlockMin/28+10)
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
	t.Run("inside a file", func(t *testing.T) {
		// the deadline passes while the first block is read
		q, err := newGrepQuery("x[^q]*y", false, false, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &hookReader{r: bytes.NewReader(data), hook: cancel}
		s := &fileSearcher{q: q, limit: 100}
		_, err = s.search(ctx, r)
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "search stopped at line ")
		assert.Less(t, r.n, len(data), "the search went on to the end of the file")
	})
	t.Run("inside a long line", func(t *testing.T) {
		q, err := newGrepQuery("needle", false, false, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		long := bytes.Repeat([]byte("a"), 64)
		r := &hookReader{r: bytes.NewReader(long), hook: cancel, after: 16}
		s := &fileSearcher{q: q, limit: 100, buf: make([]byte, 8), maxBlock: 8}
		_, err = s.search(ctx, r)
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "search stopped at line 1")
	})
}

// hookReader calls hook once more than after bytes were read.
type hookReader struct {
	r     io.Reader
	hook  func()
	after int
	n     int
}

func (h *hookReader) Read(p []byte) (int, error) {
	n, err := h.r.Read(p)
	h.n += n
	if h.hook != nil && h.n > h.after {
		h.hook()
		h.hook = nil
	}
	return n, err
}

// rgLines returns the numbers of the lines ripgrep reports for pattern in
// file, or skips the test when rg is not installed.
func rgLines(t *testing.T, pattern, file string) []int {
	t.Helper()
	rg, err := exec.LookPath("rg")
	if err != nil {
		t.Skip("rg (ripgrep) is not installed: apt-get install ripgrep")
	}
	out, err := exec.Command(rg, "--line-number", "--no-heading", "--no-filename", "--color", "never", "-e", pattern, "--", file).Output()
	var exit *exec.ExitError
	if errors.As(err, &exit) && exit.ExitCode() == 1 {
		return nil // no match
	}
	require.NoError(t, err)
	var lines []int
	for _, l := range strings.Split(strings.TrimSuffix(string(out), "\n"), "\n") {
		n, err := strconv.Atoi(l[:strings.IndexByte(l, ':')])
		require.NoError(t, err, "rg line %q", l)
		lines = append(lines, n)
	}
	return lines
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
				assert.Equal(t, rgLines(t, tt.pattern, filepath.Join(ct.Root(), file)), grepLineNumbers(t, got))
			})
		})
	}
}

func TestGrepLinesLongerThanABlock(t *testing.T) {
	ct := newTools(t)
	long := func(parts ...string) string { return strings.Join(parts, "") }
	a := func(n int) string { return strings.Repeat("a", n) }
	files := map[string]string{
		// b at the end of the first 8 MiB: b$ matched there before
		"end.txt": long(a(grepBlockMax-1), "b", strings.Repeat("c", 1<<20), "\nnext b\n"),
		// a needle across the 8 MiB mark: missed before
		"across.txt": long("before\n", a(grepBlockMax-3), "needle", a(1<<20), "\nafter\n"),
		// a match near the end of a 9 MiB line without a final newline
		"tail.txt": long("first\n", a(grepBlockMax+1<<20), "needle", a(5)),
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
		require.ErrorIs(t, err, errGrepNewline, "args %v", args)
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

// BenchmarkGrepNegatedClass is the x[^q]*y at three sizes: the
// time per byte must stay flat (it grew with the size before).
func BenchmarkGrepNegatedClass(b *testing.B) {
	q, err := newGrepQuery("x[^q]*y", false, false, 0)
	require.NoError(b, err)
	for _, size := range []int{156 << 10, 1 << 20, 16 << 20} {
		data := negatedClassFile(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := &fileSearcher{q: q, limit: 100}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := s.search(context.Background(), bytes.NewReader(data))
				_, n := res.text, res.matches
				if err != nil || n != 0 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

// TestGrepLongLineWindows: on lines far longer than grepLongLine, a
// pattern of bounded span is tested in windows around the prefilter's
// hits; the answer is the one of the whole line, wherever the match lies
// (at the start, the end, across window edges, beside runes of several
// bytes and invalid UTF-8).
func TestGrepLongLineWindows(t *testing.T) {
	t.Parallel()
	filler := strings.Repeat("x-1 é 2-y \xe2\x84 ", 2000) // hits of '-' everywhere, no date
	lines := []string{
		filler,
		"2024-01-02" + filler,
		filler + "2024-01-02",
		filler[:len(filler)/2] + "2024-01-02" + filler[len(filler)/2:],
		filler + "2024-01-0",
		strings.Repeat("1-", 5000) + "1",
		strings.Repeat("12-", 3000) + "1234-56-78",
	}
	data := []byte(strings.Join(lines, "\n") + "\n")
	// and long lines of runes of 1 to 4 bytes and invalid UTF-8, drawn at
	// random, where a window's edge falls inside a rune
	r := rand.New(rand.NewPCG(5, 6))
	tokens := []string{"😀", "😀", "é", "-", "x", "\xe2\x84", "\xa9", " ", "😀-", "é-"}
	for range 200 {
		var b strings.Builder
		for b.Len() < 3*grepLongLine {
			b.WriteString(tokens[r.IntN(len(tokens))])
		}
		data = append(append(data, b.String()...), '\n')
	}
	for _, pattern := range []string{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, `x-1 .`, `.\xe2`, `é 2-y`, `\x{FFFD}\x{FFFD} x`, `2-y \x{FFFD}`,
		`\x{FFFD}.{0,8}-`, `.{3}-.{3}`, `😀-x`, `é.-`, `[^x]{2}-x`, `\x{FFFD}😀{2,5}-`, `-\x{FFFD}`} {
		q, err := newGrepQuery(pattern, false, false, 0)
		require.NoError(t, err)
		require.NotZero(t, q.span, "pattern %q has a bounded span", pattern)
		s := &fileSearcher{q: q, limit: 1 << 30}
		res, err := s.search(context.Background(), bytes.NewReader(data))
		got, _ := res.text, res.matches
		require.NoError(t, err)
		want := grepText(naiveGrep(data, regexp.MustCompile(pattern), 0), 0)
		assert.Equal(t, want, got, "pattern %q", pattern)
	}
}
