package search

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
	"unsafe"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// refLine is a line of the reference answer: a match or a context line.
type refLine struct {
	n     int
	text  string
	match bool
}

// naiveGrep is the reference: every line tested on its own.
func naiveGrep(data []byte, re *regexp.Regexp, C int) []refLine {
	if len(data) == 0 {
		return nil
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'})
	show := make([]int, len(lines)) // 0 no, 1 context, 2 match
	for i, l := range lines {
		if re.Match(l) {
			show[i] = 2
			for k := max(0, i-C); k <= min(len(lines)-1, i+C); k++ {
				if show[k] == 0 {
					show[k] = 1
				}
			}
		}
	}
	var out []refLine
	for i, s := range show {
		if s > 0 {
			out = append(out, refLine{n: i + 1, text: cutLine(lines[i]), match: s == 2})
		}
	}
	return out
}

// grepText writes lines as search gives them (grepFileResult.text), with
// "--" between groups when context is shown.
func grepText(lines []refLine, C int) string {
	var b strings.Builder
	for i, l := range lines {
		if C > 0 && i > 0 && l.n > lines[i-1].n+1 {
			b.WriteString("--\n")
		}
		mark := "-"
		if l.match {
			mark = ":"
		}
		fmt.Fprintf(&b, "%s%d%s %s\n", mark, l.n, mark, l.text)
	}
	return b.String()
}

// grepFuzzPatterns are the patterns FuzzGrepSearch tries, each as a
// regular expression, as literal text and ignoring case: empty matches at
// line ends, negated classes and classes holding a line break, \A and \z.
var grepFuzzPatterns = []string{
	"a", "ab", "a.c", "^b", "c$", "[ab]+c", "x*", `\bfoo\b`, "(?i)AB", "b\\s*a", "abc|ca",
	"$", `\s*$`, "^", "^$", "x[^q]*y", "[^a]+", `a[^b]*$`, `a\s`, `\s+`, `(?s)a.b`, `(?s).*`,
	`\Aa`, `b\z`, `\Bb`, "é", `[[:space:]]a`, `\pCa`, "a{2,}", "(a|)$",
}

func FuzzGrepSearch(f *testing.F) {
	idx := func(p string) uint8 { return uint8(slices.Index(grepFuzzPatterns, p)) }
	f.Add([]byte("abc\nfoo bar\n\nca\nb\n"), uint8(0), uint8(1), uint8(3), uint8(4))
	f.Add([]byte("aaaa\nbbbb\ncccc\nabab\nxx\n\n\nac"), uint8(5), uint8(2), uint8(1), uint8(4))
	f.Add([]byte("hello"), idx("$"), uint8(0), uint8(15), uint8(4))
	f.Add([]byte("hello  "), idx(`\s*$`), uint8(1), uint8(2), uint8(0))
	f.Add([]byte("ax\nxb\nx y\nyx q y\n"), idx("x[^q]*y"), uint8(1), uint8(3), uint8(0))
	f.Add([]byte("a a a\nb\naab b b b\nbb"), idx(`a[^b]*$`), uint8(2), uint8(2), uint8(1))
	f.Fuzz(func(t *testing.T, data []byte, pat, ctxLines, block, maxBlock uint8) {
		if bytes.IndexByte(data, 0) >= 0 {
			return
		}
		pattern := grepFuzzPatterns[int(pat)%len(grepFuzzPatterns)]
		literal, ignoreCase, ref := false, false, pattern
		switch int(pat) / len(grepFuzzPatterns) % 3 {
		case 1:
			literal, ref = true, regexp.QuoteMeta(pattern)
		case 2:
			ignoreCase, ref = true, "(?i)"+pattern
		}
		C := int(ctxLines % 4)
		q, err := Compile(pattern, literal, ignoreCase, C)
		require.NoError(t, err)
		q.window = 1 + int(block>>4)
		q.longLine = int(block >> 4) // small: most lines are tested in windows
		s := &Searcher{q: q, limit: 1 << 30, buf: make([]byte, 1+int(block)%16)}
		if k := int(maxBlock % 5); k < 4 { // else the default: lines grow the buffer
			s.maxBlock = len(s.buf) << k // longer lines are streamed
		}
		res, err := s.Search(context.Background(), bytes.NewReader(data))
		got, n := res.text, res.matches
		require.NoError(t, err)
		lines := naiveGrep(data, regexp.MustCompile(ref), C)
		matches := 0
		for _, l := range lines {
			if l.match {
				matches++
			}
		}
		assert.Equal(t, matches, n)
		assert.Equal(t, len(lines), res.lines)
		assert.Equal(t, grepText(lines, C), got, "pattern %q literal %v ignoreCase %v context %d block %d max %d window %d data %q",
			pattern, literal, ignoreCase, C, len(s.buf), s.maxBlock, q.window, data)
	})
}

// TestGrepHugeFileIsCutWhileSearched: a file with more matching text than
// the answer can hold is not kept whole in memory; the answer is cut, and
// every match is still counted.
func TestGrepHugeFileIsCutWhileSearched(t *testing.T) {
	q, err := Compile("hit", false, false, 0)
	require.NoError(t, err)
	data := bytes.Repeat([]byte("a hit on every line\n"), 100000)
	s := &Searcher{q: q, limit: 1 << 30, maxText: 4096}
	res, err := s.Search(context.Background(), bytes.NewReader(data))
	text, n := res.text, res.matches
	require.NoError(t, err)
	assert.Equal(t, 100000, n)
	assert.Less(t, len(text), 4096+600, "the text went on past maxText")
	assert.True(t, strings.HasPrefix(text, ":1: a hit on every line\n:2: "), text[:40])
	assert.Equal(t, strings.Count(text, "\n"), res.lines)
}

// TestSearchStopsOnContext: a deadline that passes inside a file, or inside
// a line longer than the buffer, stops the search with its error.
func TestSearchStopsOnContext(t *testing.T) {
	data := bytes.Repeat([]byte("nothing to see on this line\n"), 3*BlockMin/28+10)
	t.Run("inside a file", func(t *testing.T) {
		// the deadline passes while the first block is read
		q, err := Compile("x[^q]*y", false, false, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		r := &hookReader{r: bytes.NewReader(data), hook: cancel}
		s := &Searcher{q: q, limit: 100}
		_, err = s.Search(ctx, r)
		require.ErrorIs(t, err, context.Canceled)
		assert.Contains(t, err.Error(), "search stopped at line ")
		assert.Less(t, r.n, len(data), "the search went on to the end of the file")
	})
	t.Run("inside a long line", func(t *testing.T) {
		q, err := Compile("needle", false, false, 0)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		long := bytes.Repeat([]byte("a"), 64)
		r := &hookReader{r: bytes.NewReader(long), hook: cancel, after: 16}
		s := &Searcher{q: q, limit: 100, buf: make([]byte, 8), maxBlock: 8}
		_, err = s.Search(ctx, r)
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

// negatedClassFile is the case for x[^q]*y: many lines with an x,
// a line with a y every hundred lines, no q anywhere and no matching line
// (a match would have to run across lines), size bytes in all.
func negatedClassFile(size int) []byte {
	chunk := strings.Repeat("an x in a line with text, no match here\n", 99) + "only a y on this line, the other letter is absent\n"
	data := []byte(strings.Repeat(chunk, size/len(chunk)+1))[:size]
	return data[:bytes.LastIndexByte(data, '\n')+1]
}

// BenchmarkGrepNegatedClass is the x[^q]*y at three sizes: the
// time per byte must stay flat (it grew with the size before).
func BenchmarkGrepNegatedClass(b *testing.B) {
	q, err := Compile("x[^q]*y", false, false, 0)
	require.NoError(b, err)
	for _, size := range []int{156 << 10, 1 << 20, 16 << 20} {
		data := negatedClassFile(size)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			s := &Searcher{q: q, limit: 100}
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				res, err := s.Search(context.Background(), bytes.NewReader(data))
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
		q, err := Compile(pattern, false, false, 0)
		require.NoError(t, err)
		require.NotZero(t, q.span, "pattern %q has a bounded span", pattern)
		s := &Searcher{q: q, limit: 1 << 30}
		res, err := s.Search(context.Background(), bytes.NewReader(data))
		got, _ := res.text, res.matches
		require.NoError(t, err)
		want := grepText(naiveGrep(data, regexp.MustCompile(pattern), 0), 0)
		assert.Equal(t, want, got, "pattern %q", pattern)
	}
}

// TestGrepFastPathsAgainstRipgrep runs the engine and ripgrep on the same
// tricky file and compares the numbers of the matching lines.
func TestGrepFastPathsAgainstRipgrep(t *testing.T) {
	data := grepTrickyText(2, 5000)
	data = bytes.ToValidUTF8(data, []byte("?")) // rg searches invalid UTF-8 bytes as bytes
	file := filepath.Join(t.TempDir(), "tricky.txt")
	require.NoError(t, os.WriteFile(file, data, 0o644))
	for _, pattern := range []string{"unmarshal", "kiss", "Été", `func.*error`, `[α-ω]+`, `\p{Greek}`, `Dial|Listen|Accept`, `(?i)\w*Error\(`} {
		q, err := Compile(pattern, false, true, 0)
		require.NoError(t, err)
		res, err := NewSearcher(q, 1<<30, 0).Search(context.Background(), bytes.NewReader(data))
		require.NoError(t, err)
		want := testkit.RipgrepLines(t, "(?i)"+pattern, file)
		assert.Equal(t, want, matchLineNumbers(t, res.text), "pattern %q", pattern)
	}
}

// matchLineNumbers returns the numbers of the matching lines of a file's
// text (":N: text" lines).
func matchLineNumbers(t *testing.T, text string) []int {
	t.Helper()
	var lines []int
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		if !strings.HasPrefix(l, ":") {
			continue
		}
		n, err := strconv.Atoi(l[1 : strings.IndexByte(l[1:], ':')+1])
		require.NoError(t, err, "line %q", l)
		lines = append(lines, n)
	}
	return lines
}

// TestGrepTextsOfEarlierFilesStay: a searcher writes each file's lines
// after the last file's, in its arena, and hands them out without a copy;
// the texts it gave stay as they were while it searches more files, short
// ones, ones that fill the chunk and ones that outgrow it, and a file
// without a match gives no text.
func TestGrepTextsOfEarlierFilesStay(t *testing.T) {
	q, err := Compile("hit", false, false, 1)
	require.NoError(t, err)
	s := NewSearcher(q, 1<<30, 0)
	rng := rand.New(rand.NewPCG(1, 2))
	var got, want []string
	for i := range 300 {
		var b strings.Builder
		lines := []int{1, 3, 40, 2000, 9000}[rng.IntN(5)]
		for k := range lines {
			if rng.IntN(3) == 0 && i%7 != 0 {
				fmt.Fprintf(&b, "file %d line %d: a hit\n", i, k)
			} else {
				fmt.Fprintf(&b, "file %d line %d\n", i, k)
			}
		}
		data := []byte(b.String())
		res, err := s.Search(context.Background(), bytes.NewReader(data))
		require.NoError(t, err)
		ref := grepText(naiveGrep(data, regexp.MustCompile("hit"), 1), 1)
		require.Equal(t, ref, res.text, "file %d", i)
		got, want = append(got, res.text), append(want, strings.Clone(ref))
	}
	for i := range got {
		assert.Equal(t, want[i], got[i], "the text of file %d changed after it was given", i)
	}
}

// TestCollectorCopiesOnceFull: once the collector holds its limit, a file
// it keeps gets its own copy of its lines, so that a file dropped later
// holds no searcher's chunk; the files kept before share theirs.
func TestCollectorCopiesOnceFull(t *testing.T) {
	q, err := Compile("hit", false, false, 0)
	require.NoError(t, err)
	s := NewSearcher(q, 1<<30, 0)
	col := NewCollector(2)
	search := func(rel string) string {
		res, err := s.Search(context.Background(), strings.NewReader(rel+" hit\n"))
		require.NoError(t, err)
		col.Add(rel, res)
		return res.text
	}
	a, b := search("b"), search("c")
	first := col.sorted()
	assert.Same(t, unsafe.StringData(a), unsafe.StringData(first[0].text), "kept before the limit: no copy")
	assert.Same(t, unsafe.StringData(b), unsafe.StringData(first[1].text))
	c := search("a")
	files := col.sorted()
	require.Len(t, files, 2)
	assert.Equal(t, "a", files[0].rel)
	assert.Equal(t, c, files[0].text)
	assert.NotSame(t, unsafe.StringData(c), unsafe.StringData(files[0].text), "kept once full: its own copy")
}

// TestValidText: validText agrees with utf8.Valid, whatever the length and
// wherever a byte outside ASCII (valid or not) stands.
func TestValidText(t *testing.T) {
	for n := 0; n <= 40; n++ {
		ascii := bytes.Repeat([]byte{'a'}, n)
		assert.True(t, validText(ascii), n)
		for at := 0; at < n; at++ {
			for _, bad := range [][]byte{{0xff}, {0xc3}, {0xe2, 0x82}, []byte("é"), []byte("€")} {
				b := append(append(append([]byte{}, ascii[:at]...), bad...), ascii[at:]...)
				assert.Equal(t, utf8.Valid(b), validText(b), "%q", b)
			}
		}
	}
}

// TestLineStart: lineStart finds the start of the line holding an offset
// as bytes.LastIndexByte does, wherever the line breaks are.
func TestLineStart(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 2000 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = "a\n\x0b\x09\xff"[rng.IntN(5)]
		}
		for at := 0; at <= len(b); at++ {
			require.Equal(t, bytes.LastIndexByte(b[:at], '\n')+1, lineStart(b, at), "%q at %d", b, at)
		}
	}
}
