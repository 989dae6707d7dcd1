package gitignore

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// patternCase is one .gitignore (at the walk root) and one path to test.
type patternCase struct {
	gitignore string
	path      string
	isDir     bool
	want      bool // Ignored's answer (the path itself only)
}

// patternCases covers gitignore(5) rule by rule. TestPatternsAgreeWithGit
// also runs every case through git check-ignore.
var patternCases = []patternCase{
	// Blank lines, comments and escapes.
	{"", "a", false, false},
	{"\n\n   \n", "a", false, false},
	{"# comment\n", "# comment", false, false},
	{"#foo", "#foo", false, false},
	{`\#foo`, "#foo", false, true},
	{`\!foo`, "!foo", false, true},
	{`\!foo`, "foo", false, false},
	{" #foo", " #foo", false, true}, // only a "#" in column one starts a comment

	// Trailing spaces, escaped spaces, tabs, CRLF, BOM.
	{"foo   ", "foo", false, true},
	{"foo   ", "foo   ", false, false},
	{`foo\ `, "foo ", false, true},
	{`foo\ `, "foo", false, false},
	{`foo\ \ `, "foo  ", false, true},
	{`foo \ `, "foo  ", false, true},
	{"foo\t", "foo\t", false, true}, // tabs are not trimmed
	{"foo\t", "foo", false, false},
	{"foo\r\nbar\r\n", "foo", false, true},
	{"foo\r\nbar\r\n", "bar", false, true},
	{"\xef\xbb\xbffoo", "foo", false, true},
	{"foo", "foo", false, true}, // last line without newline
	{`foo\`, "foo", false, false},
	{`foo\`, `foo\`, false, false}, // a trailing backslash matches nothing

	// Negation: the last matching pattern wins.
	{"!foo", "foo", false, false},
	{"foo\n!foo", "foo", false, false},
	{"!foo\nfoo", "foo", false, true},
	{"*.txt\n!important.txt", "a.txt", false, true},
	{"*.txt\n!important.txt", "important.txt", false, false},
	{"*.txt\n!important.txt", "sub/important.txt", false, false},
	{"*.txt\n!important.txt", "sub/b.txt", false, true},
	{"*.txt\n!important.txt\nimp*", "important.txt", false, true},
	{"!", "!", false, false},
	{"/", "a", true, false},

	// Trailing slash: folders only.
	{"frotz/", "frotz", true, true},
	{"frotz/", "frotz", false, false},
	{"frotz/", "a/frotz", true, true},
	{"frotz/", "a/b/frotz", true, true},
	{"frotz", "frotz", true, true},
	{"frotz", "a/frotz", false, true},
	{"doc/frotz/", "doc/frotz", true, true},
	{"doc/frotz/", "doc/frotz", false, false},
	{"doc/frotz/", "a/doc/frotz", true, false},
	{"*\n!foo/", "foo", true, false},
	{"*\n!foo/", "foo", false, true},
	{"foo//", "foo", true, false},

	// Anchoring: a slash at the start or in the middle.
	{"/foo", "foo", false, true},
	{"/foo", "foo", true, true},
	{"/foo", "a/foo", false, false},
	{"doc/frotz", "doc/frotz", false, true},
	{"doc/frotz", "a/doc/frotz", false, false},
	{"a/b/c", "a/b/c", true, true},
	{"./foo", "foo", false, false},
	{"//foo", "foo", false, false},
	{"foo", "a/b/foo", false, true},
	{"foo", "foo/a", false, false}, // the file inside is reached only through foo

	// "*", "?" and literal characters.
	{"*", "a", false, true},
	{"*", "a/b/c", true, true},
	{"*.o", "a.o", false, true},
	{"*.o", "dir/a.o", false, true},
	{"*.o", "a.o", true, true},
	{"*.o", ".o", false, true},
	{"*.o", "a.oo", false, false},
	{"*.o", "a.o/b", false, false},
	{"foo*", "foobar", false, true},
	{"foo*", "foo", false, true},
	{"foo*", "barfoo", false, false},
	{"*foo*", "xfooy", false, true},
	{"*foo*", "xfoy", false, false},
	{"?", "a", false, true},
	{"?", "ab", false, false},
	{"a?c", "abc", false, true},
	{"a?c", "a/c", false, false},
	{"a?c", "x/abc", false, true},
	{"a/?", "a/b", false, true},
	{"*/b", "a/b", false, true},
	{"*/b", "b", false, false},
	{"*/b", "x/a/b", false, false},
	{"foo/*", "foo/x", false, true},
	{"foo/*", "foo/x/y", false, false},
	{"foo/*", "a/foo/x", false, false},
	{"foo/*", "foo", true, false},
	{"a*b*c", "abc", false, true},
	{"a*b*c", "axxbyyc", false, true},
	{"a*b*c", "axxbyy", false, false},
	{"a/*x*/c", "a/bxb/c", false, true},
	{"a/*x*/c", "a/b/x/c", false, false},
	{`\*`, "*", false, true},
	{`\*`, "a", false, false},
	{`a\?`, "a?", false, true},
	{`a\?`, "ab", false, false},
	{`\a`, "a", false, true},

	// Bracket expressions.
	{"[a-c]x", "bx", false, true},
	{"[a-c]x", "dx", false, false},
	{"[!a-c]x", "dx", false, true},
	{"[!a-c]x", "bx", false, false},
	{"[^a-c]x", "dx", false, true},
	{"[^a-c]x", "ax", false, false},
	{"[abc]", "b", false, true},
	{"[abc]", "d", false, false},
	{"[]]", "]", false, true},
	{"[]a]", "a", false, true},
	{"[!]]", "a", false, true},
	{"[!]]", "]", false, false},
	{"[a-]", "-", false, true},
	{"[a-]", "b", false, false},
	{"[-a]", "-", false, true},
	{`[\]]`, "]", false, true},
	{`[\-]`, "-", false, true},
	{"[[:digit:]]*", "1abc", false, true},
	{"[[:digit:]]*", "abc", false, false},
	{"[[:alpha:]][[:upper:]]", "aB", false, true},
	{"[[:alpha:]][[:upper:]]", "ab", false, false},
	{"[![:lower:]]", "A", false, true},
	{"[![:lower:]]", "a", false, false},
	{"x[[:space:][:punct:]]", "x.", false, true},
	{"x[[:xdigit:]]", "xF", false, true},
	{"x[[:xdigit:]]", "xg", false, false},
	{"[[:nope:]]", "n", false, false}, // unknown class: never matches
	{"[a", "[a", false, false},        // unterminated: never matches
	{"[a", "a", false, false},
	{"a[/]b", "a/b", false, false}, // a bracket never matches "/"
	{"[[]", "[", false, true},
	{"[[:]", "[", false, true}, // no ":]": "[" and ":" are plain members
	{"[[x]", "x", false, true},

	// "**".
	{"**/foo", "foo", false, true},
	{"**/foo", "a/foo", false, true},
	{"**/foo", "a/b/foo", true, true},
	{"**/foo", "afoo", false, false},
	{"**/foo", "a/xfoo", false, false},
	{"**/foo/bar", "foo/bar", false, true},
	{"**/foo/bar", "x/y/foo/bar", false, true},
	{"**/foo/bar", "foo/x/bar", false, false},
	{"**/foo/", "x/foo", true, true},
	{"**/foo/", "x/foo", false, false},
	{"abc/**", "abc/x", false, true},
	{"abc/**", "abc/x/y", true, true},
	{"abc/**", "abc", true, false},
	{"abc/**", "x/abc/y", false, false},
	{"abc/**/", "abc/x", false, false},
	{"abc/**/", "abc/x", true, true},
	{"a/**/b", "a/b", false, true},
	{"a/**/b", "a/x/b", false, true},
	{"a/**/b", "a/x/y/b", false, true},
	{"a/**/b", "a/xb", false, false},
	{"a/**/b", "x/a/b", false, false},
	{"a/**/**/b", "a/b", false, true},
	{"a/**/b/**/c", "a/x/b/y/z/c", false, true},
	{"a/**/*.go", "a/x/y/m.go", false, true},
	{"a/**/*.go", "a/m.go", false, true},
	{"a/**/*.go", "a/m.c", false, false},
	{"**", "a/b", false, true},
	{"/**", "a/b", false, true},
	{"**/", "a", true, true},
	{"**/", "a", false, false},
	{"**foo", "xfoo", false, true},   // no slash: "**" is "*"
	{"a/**b", "a/xb", false, true},   // "**" next to a name is "*"
	{"a/**b", "a/x/b", false, false}, // ...which stops at "/"
	{"a**/b", "ax/b", false, true},
	{"foo**/bar", "foo/x/bar", false, true}, // git quirk: "**" right after the literal prefix
	{"**/a*/**", "x/ab/c", false, true},
	{"**/a*/**", "x/ab", true, false},
	{"a/**/b*[c]", "a/q/bx/bc", false, true}, // "**" retries after an inner "*" hits "/"
	{"a/**/b*[c]", "a/q/bx/by", false, false},
	{"a/**/b*c", "a/q/bx/bc", false, true},

	// Pattern precedence: "/*", "!/foo", "/foo/*", "!/foo/bar".
	{"/*\n!/foo\n/foo/*\n!/foo/bar", "x", false, true},
	{"/*\n!/foo\n/foo/*\n!/foo/bar", "foo", true, false},
	{"/*\n!/foo\n/foo/*\n!/foo/bar", "foo/y", true, true},
	{"/*\n!/foo\n/foo/*\n!/foo/bar", "foo/bar", true, false},
	{"/*\n!/foo\n/foo/*\n!/foo/bar", "foo/bar/z", false, false},
}

func TestIgnoredTable(t *testing.T) {
	for _, c := range patternCases {
		name := fmt.Sprintf("%q/%q/dir=%v", c.gitignore, c.path, c.isDir)
		t.Run(name, func(t *testing.T) {
			m := (*Matcher)(nil).Child("", []byte(c.gitignore))
			assert.Equal(t, c.want, m.Ignored(c.path, c.isDir))

			// The same .gitignore in a subfolder applies to the same
			// paths below it, and not to the subfolder's siblings.
			sub := (*Matcher)(nil).Child("sub/dir", []byte(c.gitignore))
			assert.Equal(t, c.want, sub.Ignored("sub/dir/"+c.path, c.isDir), "nested")
			assert.False(t, sub.Ignored(c.path, c.isDir), "outside its folder")
			assert.False(t, sub.Ignored("sub/dirx/"+c.path, c.isDir), "sibling with a common prefix")
		})
	}
}

func TestParsePatterns(t *testing.T) {
	ps := ParsePatterns("./a/b/", []byte("# c\n\n*.o  \n!keep.o\n/build/\n"))
	require.Len(t, ps, 3)
	assert.Equal(t, "*.o", ps[0].String())
	assert.Equal(t, "a/b", ps[0].Base())
	assert.False(t, ps[0].Negated())
	assert.True(t, ps[1].Negated())
	assert.Equal(t, "!keep.o", ps[1].String())
	assert.True(t, ps[2].Match("a/b/build", true))
	assert.False(t, ps[2].Match("a/b/build", false))
	assert.False(t, ps[2].Match("build", true))
	assert.True(t, ps[1].Match("a/b/c/keep.o", false), "Match ignores negation")

	assert.Empty(t, ParsePatterns("", []byte("# only\n\n  \n!\n/\n")))
	assert.Empty(t, ParsePatterns("", nil))
	assert.Equal(t, "", ParsePatterns(".", []byte("x"))[0].Base())
	var zero Pattern
	assert.False(t, zero.Match("a", false))
}

func TestMatcherNilAndEmpty(t *testing.T) {
	var m *Matcher
	assert.False(t, m.Ignored("a", false))
	assert.False(t, m.IgnoredWithParents("a/b", false))
	assert.Nil(t, m.Child("", nil))
	assert.Nil(t, m.Child("x", []byte("# nothing\n\n")))
	assert.Nil(t, m.Push())

	root := m.Child("", []byte("*.o"))
	require.NotNil(t, root)
	assert.Same(t, root, root.Child("sub", nil))
	assert.Same(t, root, root.Child("sub", []byte{}))
	assert.Same(t, root, root.Child("sub", []byte("# comment only\n")))
	assert.False(t, root.Ignored("", true), "the walk root itself")
}

func TestNestedOverrides(t *testing.T) {
	root := (*Matcher)(nil).Child("", []byte("*.log\n!keep.log\nbuild/\n/top\n"))
	sub := root.Child("sub", []byte("!*.log\n/local\nsub\n!build/\n"))
	deep := sub.Child("sub/deep", []byte("*.log\n!/top\n"))
	other := root.Child("other", []byte("!keep*\nkeep.log\n"))

	cases := []struct {
		m     *Matcher
		path  string
		isDir bool
		want  bool
	}{
		{root, "a.log", false, true},
		{root, "keep.log", false, false},
		{root, "x/y/a.log", false, true},
		{root, "top", false, true},
		{root, "x/top", false, false},
		{sub, "sub/a.log", false, false},   // sub re-includes *.log
		{sub, "sub/x/a.log", false, false}, // at any depth below sub
		{sub, "a.log", false, true},        // not above it
		{sub, "subx/a.log", false, true},   // nor in a sibling with a common prefix
		{sub, "sub/local", false, true},    // anchored to sub
		{sub, "sub/x/local", false, false},
		{sub, "local", false, false},
		{sub, "sub", true, false}, // a folder's own patterns do not apply to it
		{sub, "sub/sub", true, true},
		{sub, "sub/build", true, false}, // "!build/" in sub overrides root's "build/"
		{sub, "build", true, true},
		{sub, "sub/top", false, false},
		{deep, "sub/deep/a.log", false, true}, // deeper file wins again
		{deep, "sub/a.log", false, false},
		{deep, "sub/deep/keep.log", false, true},
		{deep, "sub/deep/top", false, false},
		{other, "other/keep.log", false, true},
		{other, "other/keep.txt", false, false},
		{other, "keep.log", false, false},
	}
	for _, c := range cases {
		assert.Equal(t, c.want, c.m.Ignored(c.path, c.isDir), "%s dir=%v", c.path, c.isDir)
	}
}

func TestIgnoredWithParents(t *testing.T) {
	m := (*Matcher)(nil).Child("", []byte("build/\n!build/keep.txt\n/*\n!/src\n/src/*\n!/src/main\n"))
	assert.False(t, m.Ignored("build/keep.txt", false), "the path itself is re-included")
	assert.True(t, m.IgnoredWithParents("build/keep.txt", false), "but its folder is excluded")
	assert.True(t, m.IgnoredWithParents("x/build/keep.txt", false))
	assert.True(t, m.IgnoredWithParents("other", false))
	assert.False(t, m.IgnoredWithParents("src", true))
	assert.True(t, m.IgnoredWithParents("src/lib/a.go", false))
	assert.False(t, m.IgnoredWithParents("src/main/a.go", false))
	assert.False(t, m.IgnoredWithParents("src/main", true))
}

func TestLoadDirAndWalk(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		".gitignore":               "# root\n*.o\n/vendor/\nnode_modules/\n*.log\n!keep.log\n",
		"main.go":                  "",
		"main.o":                   "",
		"keep.log":                 "",
		"debug.log":                "",
		"vendor/x.go":              "",
		"node_modules/p/index.js":  "",
		"cmd/vendor/y.go":          "", // "/vendor/" is anchored at the root
		"cmd/tool/main.go":         "",
		"cmd/tool/node_modules/x":  "",
		"lib/.gitignore":           "!*.o\ngen/\n/local.txt\n",
		"lib/a.o":                  "",
		"lib/local.txt":            "",
		"lib/sub/local.txt":        "",
		"lib/gen/z.go":             "",
		"lib/sub/.gitignore":       "*.go\n!keep.go\n",
		"lib/sub/a.go":             "",
		"lib/sub/keep.go":          "",
		"lib/sub/b.o":              "",
		"docs/.gitignore":          "",
		"docs/readme.md":           "",
		"docs/build/.gitignore":    "!*.o\n",
		"docs/build/out.o":         "",
		"docs/build/debug.log":     "",
		"ignored/.gitignore":       "!secret\n",
		"ignored/secret":           "",
		".git/config":              "", // callers skip .git
		"lib/sub/deeper/one.go":    "",
		"lib/sub/deeper/keep.go":   "",
		"lib/sub/deeper/three.txt": "",
	}
	files[".gitignore"] += "ignored/\n"
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()

	got := walk(t, root, "", nil)
	want := []string{
		".gitignore", "cmd/tool/main.go", "cmd/vendor/y.go",
		"docs/.gitignore", "docs/build/.gitignore", "docs/build/out.o", "docs/readme.md",
		"keep.log", "lib/.gitignore", "lib/a.o", "lib/sub/.gitignore", "lib/sub/b.o",
		"lib/sub/deeper/keep.go", "lib/sub/deeper/three.txt", "lib/sub/keep.go",
		"lib/sub/local.txt", "main.go",
	}
	assert.Equal(t, want, got)

	// Starting in a subfolder loads the .gitignore files above it.
	m, err := LoadPath(root.ReadFile, "lib/sub")
	require.NoError(t, err)
	assert.True(t, m.Ignored("lib/sub/x.go", false))
	assert.False(t, m.Ignored("lib/sub/x.o", false))
	assert.True(t, m.Ignored("lib/sub/gen", true))
	assert.Equal(t, []string{"lib/sub/.gitignore", "lib/sub/b.o", "lib/sub/deeper/keep.go",
		"lib/sub/deeper/three.txt", "lib/sub/keep.go", "lib/sub/local.txt"},
		walk(t, root, "lib/sub", m))

	// An fs.FS works as well.
	fsys := os.DirFS(dir)
	m2, err := LoadDir(func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) }, ".", nil)
	require.NoError(t, err)
	assert.True(t, m2.Ignored("a.o", false))

	// A folder without .gitignore returns the parent itself.
	m3, err := LoadDir(root.ReadFile, "cmd", m2)
	require.NoError(t, err)
	assert.Same(t, m2, m3)

	// A .gitignore that cannot be read is reported, with the parent.
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "odd", ".gitignore"), 0o755))
	m4, err := LoadDir(root.ReadFile, "odd", m2)
	assert.Error(t, err)
	assert.Same(t, m2, m4)
	_, err = LoadPath(root.ReadFile, "odd/deeper")
	assert.Error(t, err)

	// Reads stay inside the root.
	_, err = LoadDir(root.ReadFile, "../outside", nil)
	assert.Error(t, err)
}

// walk lists the files below dir that m (the Matcher of dir's parent, with
// dir's own .gitignore not yet loaded) does not ignore, the way codetools
// walk: skip .git and ignored entries, and do not descend into ignored
// folders.
func walk(t *testing.T, root *os.Root, dir string, m *Matcher) []string {
	t.Helper()
	var out []string
	var visit func(dir string, m *Matcher)
	visit = func(dir string, m *Matcher) {
		m, err := LoadDir(root.ReadFile, dir, m)
		require.NoError(t, err)
		name := dir
		if name == "" {
			name = "."
		}
		entries, err := fs.ReadDir(root.FS(), name)
		require.NoError(t, err)
		for _, e := range entries {
			rel := path.Join(dir, e.Name())
			if e.Name() == ".git" || m.Ignored(rel, e.IsDir()) {
				continue
			}
			if e.IsDir() {
				visit(rel, m)
			} else {
				out = append(out, rel)
			}
		}
	}
	if dir != "" && m != nil {
		// m already holds dir's .gitignore: start from its entries.
		entries, err := fs.ReadDir(root.FS(), dir)
		require.NoError(t, err)
		for _, e := range entries {
			rel := path.Join(dir, e.Name())
			if m.Ignored(rel, e.IsDir()) {
				continue
			}
			if e.IsDir() {
				visit(rel, m)
			} else {
				out = append(out, rel)
			}
		}
	} else {
		visit(dir, m)
	}
	slices.Sort(out)
	return out
}

func TestConcurrentUse(t *testing.T) {
	root := (*Matcher)(nil).Child("", []byte(benchGitignore))
	sub := root.Child("src", []byte("!*.o\n/gen/\n"))
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			child := sub.Child(fmt.Sprintf("src/g%d", g), []byte("*.tmp\n"))
			for range 200 {
				for _, p := range benchPaths {
					_ = child.Ignored(p, false)
					_ = root.IgnoredWithParents(p, false)
				}
			}
			assert.True(t, child.Ignored(fmt.Sprintf("src/g%d/a.tmp", g), false))
			assert.False(t, child.Ignored("src/a.o", false))
		}()
	}
	wg.Wait()
}

func TestLiteralFilters(t *testing.T) {
	for _, c := range []struct{ glob, tail, needle string }{
		{"*.py[cod]", "", ".py"},
		{"**/testdata/golden/*.got", ".got", "testdata/golden/"},
		{"**/b", "b", "b"},
		{"x/**/b", "b", "x/"},
		{"a*b", "b", "a"},
		{`ab\*`, "", "ab"},
		{`a\b`, "b", "a"},
		{"[ab]c", "c", ""},
		{"x[]]", "", "x"},
		{"*", "", ""},
	} {
		assert.Equal(t, c.tail, literalTail(c.glob), "tail of %q", c.glob)
		assert.Equal(t, c.needle, literalNeedle(c.glob), "needle of %q", c.glob)
	}
}
