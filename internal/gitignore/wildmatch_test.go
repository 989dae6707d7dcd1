package gitignore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refWildmatch is wildmatch by exhaustive search: every alignment of every
// "*" is tried (memoized on the pattern and text positions), with no
// pruning. It states what wildmatch's early aborts must preserve: they may
// skip work, never change an answer. The wildcard rules are those of
// wildmatch.go's doc; brackets are decoded by the same matchBracket.
func refWildmatch(p, text string, pathname bool) bool {
	memo := map[[2]int]bool{}
	var match func(pi, ti int) bool
	match = func(pi, ti int) bool {
		key := [2]int{pi, ti}
		if r, ok := memo[key]; ok {
			return r
		}
		r := refStep(p, text, pathname, pi, ti, match)
		memo[key] = r
		return r
	}
	return match(0, 0)
}

// refStep matches p[pi:] against text[ti:], calling match for the rest.
func refStep(p, text string, pathname bool, pi, ti int, match func(pi, ti int) bool) bool {
	if pi == len(p) {
		return ti == len(text)
	}
	pc := p[pi]
	if pc != '*' {
		if ti == len(text) {
			return false
		}
		tc := text[ti]
		switch pc {
		case '\\':
			return pi+1 < len(p) && p[pi+1] == tc && match(pi+2, ti+1)
		case '?':
			return !(pathname && tc == '/') && match(pi+1, ti+1)
		case '[':
			end, ok, abort := matchBracket(p, pi+1, tc)
			// A malformed bracket fails for every character, so no
			// alignment gets past it.
			return !abort && ok && !(pathname && tc == '/') && match(end+1, ti+1)
		}
		return pc == tc && match(pi+1, ti+1)
	}
	// A run of stars: "**" is a real double star only under pathname,
	// between slashes or at either end of the pattern.
	end := pi
	for end < len(p) && p[end] == '*' {
		end++
	}
	double := !pathname
	if pathname && end-pi >= 2 && (pi == 0 || p[pi-1] == '/') &&
		(end == len(p) || p[end] == '/' || (p[end] == '\\' && end+1 < len(p) && p[end+1] == '/')) {
		double = true
		if end < len(p) && p[end] == '/' && match(end+1, ti) {
			return true // "**/" matching no folder
		}
	}
	if end == len(p) {
		return double || !strings.Contains(text[ti:], "/")
	}
	if !double && p[end] == '/' {
		// "*/": the star takes the rest of this name.
		j := strings.IndexByte(text[ti:], '/')
		return j >= 0 && match(end, ti+j)
	}
	// The star takes text[ti:k]: never the whole rest (the pattern goes
	// on), and no "/" unless it is a double star.
	for k := ti; k < len(text); k++ {
		if match(end, k) {
			return true
		}
		if !double && text[k] == '/' {
			return false
		}
	}
	return false
}

// wildmatchCases are checked against both matchers; the want column is
// git's answer (wildmatch, as test-tool wildmatch gives it).
var wildmatchCases = []struct {
	pattern, text string
	pathname      bool
	want          bool
}{
	{"foo", "foo", true, true},
	{"foo", "fo", true, false},
	{"", "", true, true},
	{"", "a", true, false},
	{"???", "abc", true, true},
	{"??", "abc", true, false},
	{"*", "abc", true, true},
	{"*", "a/b", true, false},
	{"*", "a/b", false, true},
	{"a*", "abc", true, true},
	{"*a", "abc", true, false},
	{"*b*", "abc", true, true},
	{"*x*y*z*", "axbyczd", true, true},
	{"*ab", "aaaabababab", true, true},
	{`a\*`, "a*", true, true},
	{`a\*b`, "axb", true, false},
	{`a\`, "a", true, false},
	{`a\\`, `a\`, true, true},
	{"*[bc]?", "abcd", true, true},
	{"[!a-c]x", "dx", true, true},
	{"[^a-c]x", "bx", true, false},
	{"[]]", "]", true, true},
	{"[a-]", "-", true, true},
	{"[[:digit:]x]", "7", true, true},
	{"[[:nope:]]", "a", true, false},
	{"*[[:nope:]]", "aaa", true, false},
	{"[a", "a", true, false},
	{"a?b", "a/b", true, false},
	{"a?b", "a/b", false, true},
	{"a[/]b", "a/b", true, false},
	{"a*b", "a/x/b", true, false},
	{"a**b", "a/x/b", true, false},
	{"a**b", "a/x/b", false, true},
	{"a/**/b", "a/b", true, true},
	{"a/**/b", "a/x/y/b", true, true},
	{"a/**/**/b", "a/b", true, true},
	{"a/**/**/b", "a/x/b", false, false},
	{"**/b", "b", true, true},
	{"**/b", "x/y/b", true, true},
	{"*/b", "x/y/b", true, false},
	{"*/b", "x/b", true, true},
	{"*/b", "xb", true, false},
	{"a/**", "a/x/y", true, true},
	{"a/**", "a", true, false},
	{"**/x/*", "a/x/y", true, true},
	{"**/x/*", "a/x/y/z", true, false},
	{"**/x/**", "a/x/y/z", true, true},
	{"*/x/**", "a/b/x/y", true, false},
	{"**/*x*/**/*y", "a/bxc/d/ey", true, true},
	{"*/*/*", "a/b/c", true, true},
	{"*/*/*", "a/b", true, false},
	{"*/*/*", "a/b/c/d", true, false},
	// The cases git 2.41's aborts decide: a literal after "*" missing from
	// the rest of the text, a "*/" without a "/" left, a trailing "*"
	// with a "/" left, each inside an outer "*" or "**".
	{"*a*b", "xaxaxa", true, false},
	{"*a*b", "xaxaxab", true, true},
	{"*/*q", "a/bcd", true, false},
	{"**/*/c", "a/b", true, false},
	{"**/*/c", "a/b/c", true, true},
	{"**/a*", "x/ab/c", true, false},
	{"**/a*", "x/y/ab", true, true},
	{"x*/**/y", "xa/b/y", true, true},
	{"a/**/**/**/b", "a/x/y/c", true, false},
	{"a/**/**/**/b", "a/x/y/b", true, true},
}

func TestWildmatchTable(t *testing.T) {
	for _, c := range wildmatchCases {
		assert.Equal(t, c.want, wildmatch(c.pattern, c.text, c.pathname),
			"wildmatch(%q, %q, pathname=%v)", c.pattern, c.text, c.pathname)
		assert.Equal(t, c.want, refWildmatch(c.pattern, c.text, c.pathname),
			"refWildmatch(%q, %q, pathname=%v)", c.pattern, c.text, c.pathname)
	}
}

// pathologicalCases made the backtracking port run for minutes or more
// (the first, from git's own perf test, does not end in any useful time);
// each must now take microseconds.
// want is the answer under pathname (and, for all but the chains of
// folders, without).
var pathologicalCases = []struct {
	name, gitignore, path string
	want                  bool
}{
	{"stars", strings.Repeat("*a", 16), strings.Repeat("a", 60) + "b", false},
	{"stars, matching", strings.Repeat("*a", 16), strings.Repeat("a", 60), true},
	{"stars then literal", "*a*a*a*a*a*a*a*a*ab*c", "ab" + strings.Repeat("a", 60) + "c", false},
	{"stars then literal, matching", "*a*a*a*a*a*a*a*a*ab*c", strings.Repeat("a", 60) + "bc", true},
	{"double star chain", "a/" + strings.Repeat("**/", 40) + "b", "a/" + strings.Repeat("x/", 60) + "xb", false},
	{"double star chain, matching", "a/" + strings.Repeat("**/", 40) + "b", "a/" + strings.Repeat("x/", 60) + "b", true},
	{"double stars and stars", strings.Repeat("**/*a*", 12) + "/b", strings.Repeat("aa/", 40) + "c", false},
	{"stars across folders", "a/" + strings.Repeat("*x", 14) + "/b", "a/" + strings.Repeat("x", 60) + "/c", false},
}

// TestWildmatchPathologicalTime runs each case through wildmatch and through
// a Matcher (as a walk would), on a watchdog: a case that runs away fails
// the test instead of stalling the run.
func TestWildmatchPathologicalTime(t *testing.T) {
	const limit = time.Second // the cases take microseconds; the margin is for a loaded machine
	for _, c := range pathologicalCases {
		t.Run(c.name, func(t *testing.T) {
			type result struct {
				d                     time.Duration
				path, noPath, ignored bool
			}
			done := make(chan result, 1)
			go func() {
				start := time.Now()
				var r result
				r.path = wildmatch(c.gitignore, c.path, true)
				r.noPath = wildmatch(c.gitignore, c.path, false)
				m := (*Matcher)(nil).Child("", []byte(c.gitignore+"\n"))
				r.ignored = m.Ignored(c.path, false)
				m.IgnoredWithParents(c.path, false)
				r.d = time.Since(start)
				done <- r
			}()
			select {
			case r := <-done:
				t.Logf("%s: %v", c.name, r.d)
				assert.Less(t, r.d, limit)
				assert.Equal(t, c.want, r.path, "pathname")
				assert.Equal(t, c.want, r.ignored, "Matcher")
				if !strings.Contains(c.name, "chain") {
					assert.Equal(t, c.want, r.noPath, "without pathname")
				}
			case <-time.After(limit):
				t.Fatalf("%s: still matching after %v", c.name, limit)
			}
		})
	}
}

// FuzzWildmatch compares wildmatch with the exhaustive refWildmatch on
// short inputs, and bounds wildmatch's time on any input.
func FuzzWildmatch(f *testing.F) {
	for _, c := range wildmatchCases {
		f.Add(c.pattern, c.text, c.pathname)
	}
	for _, c := range pathologicalCases {
		f.Add(c.gitignore, c.path, true)
	}
	f.Add("**/**/*a/**/b*", "x/a/ya/b/bc", true)
	f.Add("a*/*b/**/c", "ax/yb/c", true)
	f.Fuzz(func(t *testing.T, pattern, text string, pathname bool) {
		if strings.IndexByte(pattern, 0) >= 0 {
			return // patterns never hold NUL (lines are cut there)
		}
		start := time.Now()
		got := wildmatch(pattern, text, pathname)
		if d := time.Since(start); d > time.Second {
			t.Fatalf("wildmatch(%q, %q, %v) took %v", pattern, text, pathname, d)
		}
		if len(pattern) > 64 || len(text) > 64 {
			return // the reference is cubic
		}
		if want := refWildmatch(pattern, text, pathname); got != want {
			t.Fatalf("wildmatch(%q, %q, pathname=%v) = %v, exhaustive search says %v", pattern, text, pathname, got, want)
		}
	})
}

// TestWildmatchRandomAgainstReference is FuzzWildmatch's comparison on
// many generated inputs built from the characters that matter, so that
// every go test run covers it.
func TestWildmatchRandomAgainstReference(t *testing.T) {
	pieces := []string{"*", "**", "/", "a", "b", "?", "[ab]", "[!a]", `\*`, "**/", "/**", "/**/"}
	textChars := "ab/*"
	seed := uint64(1)
	next := func(n int) int { // xorshift, for a fixed sequence
		seed ^= seed << 13
		seed ^= seed >> 7
		seed ^= seed << 17
		return int(seed % uint64(n))
	}
	for i := range 20000 {
		var p, s strings.Builder
		for range 1 + next(7) {
			p.WriteString(pieces[next(len(pieces))])
		}
		for range next(12) {
			s.WriteByte(textChars[next(len(textChars))])
		}
		pathname := i%2 == 0
		got := wildmatch(p.String(), s.String(), pathname)
		want := refWildmatch(p.String(), s.String(), pathname)
		require.Equal(t, want, got, "wildmatch(%q, %q, pathname=%v)", p.String(), s.String(), pathname)
	}
}

// BenchmarkWildmatch measures ordinary and pathological patterns.
func BenchmarkWildmatch(b *testing.B) {
	cases := []struct{ pattern, text string }{
		{"**/testdata/golden/*.got", "src/debug/dwarf/testdata/golden/x.got"},
		{"*.py[cod]", "module.pyc"},
		{"a/**/b*[c]", "a/q/r/bxc"},
	}
	for _, c := range pathologicalCases {
		cases = append(cases, struct{ pattern, text string }{c.gitignore, c.path})
	}
	for i, c := range cases {
		b.Run(fmt.Sprint(i), func(b *testing.B) {
			for b.Loop() {
				wildmatch(c.pattern, c.text, true)
			}
		})
	}
}
