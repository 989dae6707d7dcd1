package codetools

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// newSearchTree builds a tree exercising .gitignore, .git, hidden files, binary
// files and symbolic links.
func newSearchTree(t *testing.T) *CodeTools {
	t.Helper()
	ct := newTools(t)
	root := ct.Root()
	writeTestFiles(t, root, map[string]string{
		"a.go":             "package a\n\nfunc Foo() {}\n\n// foo bar\n",
		"sub/b.go":         "package sub\n\nfunc Bar() { Foo() }\n",
		"sub/c.ts":         "export const foo = 1; // Foo\n",
		".hidden/h.txt":    "Foo in a hidden folder\n",
		".git/config":      "Foo in git\n",
		".gitignore":       "*.log\n!keep.log\nbuild/\n",
		"x.log":            "Foo ignored\n",
		"keep.log":         "Foo kept\n",
		"build/out.go":     "Foo built\n",
		"sub/.gitignore":   "gen.go\n",
		"sub/gen.go":       "Foo generated\n",
		"sub/deep/more.go": "Foo deep\n",
		"bin.dat":          "Foo\x00binary\n",
	})
	require.NoError(t, os.Symlink(filepath.Join(root, "a.go"), filepath.Join(root, "link.go")))
	require.NoError(t, os.Symlink(root, filepath.Join(root, "sub", "loop")))
	require.NoError(t, os.Symlink(os.TempDir(), filepath.Join(root, "outside")))
	return ct
}

func TestGrep(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"honours gitignore, hidden, binary, symlinks", map[string]any{"pattern": "Foo"},
			".hidden/h.txt:1: Foo in a hidden folder\na.go:3: func Foo() {}\nkeep.log:1: Foo kept\nsub/b.go:3: func Bar() { Foo() }\nsub/c.ts:1: export const foo = 1; // Foo\nsub/deep/more.go:1: Foo deep"},
		{"regexp", map[string]any{"pattern": `func \w+\(`},
			"a.go:3: func Foo() {}\nsub/b.go:3: func Bar() { Foo() }"},
		{"ignoreCase", map[string]any{"pattern": "foo bar|FOO =", "ignoreCase": true},
			"a.go:5: // foo bar\nsub/c.ts:1: export const foo = 1; // Foo"},
		{"literal", map[string]any{"pattern": "{ Foo()", "literal": true},
			"sub/b.go:3: func Bar() { Foo() }"},
		{"literal ignoreCase", map[string]any{"pattern": "{ FOO()", "literal": true, "ignoreCase": true},
			"sub/b.go:3: func Bar() { Foo() }"},
		{"glob", map[string]any{"pattern": "Foo", "glob": "*.ts"},
			"sub/c.ts:1: export const foo = 1; // Foo"},
		{"glob braces", map[string]any{"pattern": "Foo", "glob": "**/*.{ts,txt}"},
			".hidden/h.txt:1: Foo in a hidden folder\nsub/c.ts:1: export const foo = 1; // Foo"},
		{"path folder", map[string]any{"pattern": "Foo", "path": "sub/deep"},
			"sub/deep/more.go:1: Foo deep"},
		{"path file", map[string]any{"pattern": "Foo", "path": "sub/b.go"},
			"sub/b.go:3: func Bar() { Foo() }"},
		{"absolute path", map[string]any{"pattern": "Bar", "path": filepath.Join(ct.Root(), "sub")},
			"sub/b.go:3: func Bar() { Foo() }"},
		{"context", map[string]any{"pattern": "Foo|bar", "path": "a.go", "context": 1},
			"a.go-2- \na.go:3: func Foo() {}\na.go-4- \na.go:5: // foo bar"},
		{"context groups", map[string]any{"pattern": "package|bar", "path": "a.go", "context": 0},
			"a.go:1: package a\na.go:5: // foo bar"},
		{"context separator", map[string]any{"pattern": "package|bar", "glob": "a.go", "context": 1},
			"a.go:1: package a\na.go-2- \n--\na.go-4- \na.go:5: // foo bar"},
		{"limit", map[string]any{"pattern": "Foo", "limit": 2},
			".hidden/h.txt:1: Foo in a hidden folder\na.go:3: func Foo() {}\n\n[2 matches limit reached. Use limit=4 for more, or refine pattern]"},
		{"no match", map[string]any{"pattern": "nothing here"}, "No matches found"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := run(t, ct, "grep", tt.args)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestGrepErrors(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"invalid regexp", map[string]any{"pattern": "func (Foo"}, "missing closing )"},
		{"outside root", map[string]any{"pattern": "x", "path": "../"}, "outside the working directory"},
		{"missing path", map[string]any{"pattern": "x", "path": "nope"}, `path "nope" does not exist`},
		{"bad glob", map[string]any{"pattern": "x", "glob": "[a"}, "not a valid pattern"},
		{"symlink out", map[string]any{"pattern": "x", "path": "outside"}, "path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := run(t, ct, "grep", tt.args)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.want)
		})
	}
}

func TestGrepLongLinesAndCap(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	long := strings.Repeat("é", 700) + "needle"
	var many strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&many, "needle %d %s\n", i, strings.Repeat("x", 200))
	}
	writeTestFiles(t, ct.Root(), map[string]string{"long.txt": "needle " + long + "\n", "many.txt": many.String()})

	got, err := run(t, ct, "grep", map[string]any{"pattern": "needle", "path": "long.txt"})
	require.NoError(t, err)
	assert.Equal(t, "long.txt:1: needle "+strings.Repeat("é", 493)+"... [truncated]", got)

	got, err = run(t, ct, "grep", map[string]any{"pattern": "needle", "path": "many.txt", "limit": 5000})
	require.NoError(t, err)
	assert.Less(t, len(got), 50*1024)
	assert.Contains(t, got, "[Output truncated at 50.0KB")
}

func TestGrepDisplay(t *testing.T) {
	t.Parallel()
	ct := newSearchTree(t)
	res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{"pattern": "Bar"}})
	require.False(t, res.IsError, res.Content)
	p := payloadOf[MatchesPayload](t, res, KindMatches)
	assert.Equal(t, "Bar", p.Pattern)
	assert.Equal(t, 1, p.Total)
	assert.Equal(t, 1, p.Shown)
	require.Len(t, p.Items, 1)
	assert.Equal(t, "sub/b.go", p.Items[0].Path)
	assert.Equal(t, 3, p.Items[0].Line)
}

func TestGrepLimitAcrossManyFiles(t *testing.T) {
	t.Parallel()
	ct := newTools(t)
	files := map[string]string{}
	for i := range 300 {
		files[fmt.Sprintf("d%02d/f%03d.txt", i%17, i)] = "hit\nmiss\nhit\n"
	}
	writeTestFiles(t, ct.Root(), files)
	got, err := run(t, ct, "grep", map[string]any{"pattern": "hit", "limit": 7})
	require.NoError(t, err)
	lines := strings.Split(got, "\n")
	require.Len(t, lines, 9)
	assert.Equal(t, "d00/f000.txt:1: hit", lines[0])
	assert.Equal(t, "d00/f000.txt:3: hit", lines[1])
	assert.Equal(t, "d00/f017.txt:1: hit", lines[2])
	assert.Equal(t, "d00/f051.txt:1: hit", lines[6])
	assert.Equal(t, "[7 matches limit reached. Use limit=14 for more, or refine pattern]", lines[8])
}

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
		q, err := newGrepQuery(pattern, literal, ignoreCase, C)
		require.NoError(t, err)
		q.window = 1 + int(block>>4)
		q.longLine = int(block >> 4) // small: most lines are tested in windows
		s := &fileSearcher{q: q, limit: 1 << 30, buf: make([]byte, 1+int(block)%16)}
		if k := int(maxBlock % 5); k < 4 { // else the default: lines grow the buffer
			s.maxBlock = len(s.buf) << k // longer lines are streamed
		}
		res, err := s.search(context.Background(), bytes.NewReader(data))
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

// TestGrepAnswerAndDisplayAgree cuts the answer every way (limit, size,
// context) and checks that the Display lists exactly the matches shown,
// that no context line of a match left out is shown, and that the notice
// says why the answer ends.
func TestGrepAnswerAndDisplayAgree(t *testing.T) {
	t.Parallel()
	// files of `repeat` times 60 lines, a match every 5
	filesOf := func(repeat int) map[string]string {
		var body strings.Builder
		for i := 1; i <= 60*repeat; i++ {
			if i%5 == 0 {
				fmt.Fprintf(&body, "hit %d\n", i)
			} else {
				fmt.Fprintf(&body, "line %d\n", i)
			}
		}
		files := map[string]string{}
		for i := range 6 {
			files[fmt.Sprintf("f%d.txt", i)] = body.String() // 12 matches each, times repeat
		}
		return files
	}
	tests := []struct {
		name             string
		maxBytes         int
		limit, context   int
		wantShown        int
		wantNotice       string
		lastContextAfter int // context lines after the last match shown
		repeat           int // of the 60 lines of each file; 0 is 1
	}{
		{"whole", 50 << 10, 1000, 0, 72, "", 0, 0},
		{"limit inside a file", 50 << 10, 5, 0, 5, "[5 matches limit reached", 0, 0},
		{"limit at a file's end", 50 << 10, 12, 0, 12, "[12 matches limit reached", 0, 0},
		{"limit with context", 50 << 10, 5, 2, 5, "[5 matches limit reached", 2, 0},
		{"limit at a file's end with context", 50 << 10, 12, 2, 12, "[12 matches limit reached", 0, 0},
		{"size", 1000, 1000, 0, 0, "[Output truncated at", 0, 0},
		{"size with context", 1200, 1000, 1, 0, "[Output truncated at", -1, 0},
		// answers over grepParallelBytes are written from two goroutines
		{"large, whole", 64 << 20, 1 << 20, 1, 72 * 500, "", 0, 500},
		{"large, limit", 64 << 20, 72*500 - 7, 2, 72*500 - 7, "[35993 matches limit reached", 2, 500},
		{"large, size", 5 << 19, 1 << 20, 2, 0, "[Output truncated at", -1, 500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ct := newTools(t, WithGrepMaxBytes(tt.maxBytes))
			writeTestFiles(t, ct.Root(), filesOf(max(tt.repeat, 1)))
			res := llmtoolkit.Execute(context.Background(), ct, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{
				"pattern": "hit", "limit": tt.limit, "context": tt.context}})
			require.False(t, res.IsError, res.Content)
			p := payloadOf[MatchesPayload](t, res, KindMatches)
			all := 72 * max(tt.repeat, 1)
			if tt.limit < all { // the files past the limit may go unsearched
				assert.Greater(t, p.Total, tt.limit)
			} else {
				assert.Equal(t, all, p.Total)
			}
			body, notice, _ := strings.Cut(res.Content, "\n\n[")
			if tt.wantNotice == "" {
				assert.NotContains(t, res.Content, "\n\n[")
			} else {
				assert.True(t, strings.HasPrefix("["+notice, tt.wantNotice), "notice %q", notice)
			}
			var shown []Match
			lines := strings.Split(body, "\n")
			lastMatch := -1
			for i, l := range lines {
				if l == "--" {
					continue
				}
				path, rest, ok := strings.Cut(l, ":")
				if !ok || strings.Contains(path, "-") {
					continue
				}
				num, text, _ := strings.Cut(rest, ": ")
				n, err := strconv.Atoi(num)
				require.NoError(t, err, "line %q", l)
				shown = append(shown, Match{Path: path, Line: n, Text: text})
				lastMatch = i
			}
			if tt.wantShown > 0 {
				assert.Len(t, shown, tt.wantShown)
			}
			assert.Equal(t, len(shown), p.Shown)
			assert.Equal(t, shown, p.Items)
			if tt.lastContextAfter >= 0 && lastMatch >= 0 {
				assert.Len(t, lines[lastMatch+1:], tt.lastContextAfter, "after the last match: %q", lines[lastMatch+1:])
			}
			assert.LessOrEqual(t, len(res.Content), tt.maxBytes)
		})
	}
}

// TestGrepHugeFileIsCutWhileSearched: a file with more matching text than
// the answer can hold is not kept whole in memory; the answer is cut, and
// every match is still counted.
func TestGrepHugeFileIsCutWhileSearched(t *testing.T) {
	t.Parallel()
	q, err := newGrepQuery("hit", false, false, 0)
	require.NoError(t, err)
	data := bytes.Repeat([]byte("a hit on every line\n"), 100000)
	s := &fileSearcher{q: q, limit: 1 << 30, maxText: 4096}
	res, err := s.search(context.Background(), bytes.NewReader(data))
	text, n := res.text, res.matches
	require.NoError(t, err)
	assert.Equal(t, 100000, n)
	assert.Less(t, len(text), 4096+600, "the text went on past maxText")
	assert.True(t, strings.HasPrefix(text, ":1: a hit on every line\n:2: "), text[:40])
	assert.Equal(t, strings.Count(text, "\n"), res.lines)
}
