package codetools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
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
	p := payloadOf[MatchesPayload](t, res, DisplayMatches)
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
			p := payloadOf[MatchesPayload](t, res, DisplayMatches)
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
