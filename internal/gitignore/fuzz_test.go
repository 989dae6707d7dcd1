package gitignore

import (
	"strings"
	"testing"
	"time"
)

// FuzzParse feeds arbitrary .gitignore content and paths through parsing
// and matching: nothing may panic, and a few invariants must hold.
func FuzzParse(f *testing.F) {
	seeds := []struct {
		content, path string
		isDir         bool
	}{
		{benchGitignore, "src/net/http/server.go", false},
		{"*.o\n!keep.o\n", "a/keep.o", false},
		{"/*\n!/foo\n/foo/*\n!/foo/bar\n", "foo/bar", true},
		{"a/**/b\n**/c\nd/**\n", "a/x/y/b", false},
		{"[a-\n[!]\n[[:alpha:\n[[:nope:]]\n\\\n", "[", false},
		{"\xef\xbb\xbf# c\r\n\\#x  \r\n\\!y\\ \n", "#x", false},
		{"a/**/b*[c]\n***/*\n/**/", "a/q/bx/bc", true},
		{"\x00\n!\n/\n//\n", "", false},
		// Patterns that backtracked for minutes before git 2.41's aborts.
		{"*a*a*a*a*a*a*a*a*ab*c\n", "ab" + strings.Repeat("a", 60) + "c", false},
		{"x/" + strings.Repeat("**/", 30) + "b\n", "x/" + strings.Repeat("y/", 40) + "zb", false},
	}
	for _, s := range seeds {
		f.Add([]byte(s.content), s.path, s.isDir)
	}
	f.Fuzz(func(t *testing.T, content []byte, relPath string, isDir bool) {
		start := time.Now()
		defer func() {
			// Matching is polynomial: a fuzz input never takes long.
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("%d bytes of patterns against %q took %v", len(content), relPath, d)
			}
		}()
		patterns := ParsePatterns("", content)
		for _, p := range patterns {
			if strings.ContainsAny(p.String(), "\n\x00") {
				t.Fatalf("pattern %q spans lines or holds NUL", p.String())
			}
			if got, want := p.Match(relPath, isDir), refMatch(p.String(), relPath, isDir); got != want {
				t.Fatalf("pattern %q, path %q, dir=%v: Match %v, reference %v", p.String(), relPath, isDir, got, want)
			}
		}
		m := (*Matcher)(nil).Child("", content)
		got := m.Ignored(relPath, isDir)
		_ = m.IgnoredWithParents(relPath, isDir)

		// The same file one folder down matches the same paths below it,
		// and nothing outside.
		sub := (*Matcher)(nil).Child("sub", content)
		if relPath != "" {
			if sub.Ignored("sub/"+relPath, isDir) != got {
				t.Fatalf("nested result differs for %q", relPath)
			}
		}
		if !strings.HasPrefix(relPath, "sub/") && sub.Ignored(relPath, isDir) {
			t.Fatalf("%q ignored by a .gitignore in sub/", relPath)
		}

		// A negation of everything at the end re-includes every path.
		all := m.Child("", []byte("!*\n!**\n!*/\n"))
		if all.Ignored(relPath, isDir) {
			t.Fatalf("%q still ignored after !*", relPath)
		}
	})
}

// refMatch is git's match_basename/match_pathname for a root .gitignore,
// done with wildmatch alone: no fast paths and no literal filters. Short
// inputs go through the exhaustive refWildmatch instead, so that its
// early aborts are checked too.
func refMatch(line, relPath string, isDir bool) bool {
	s := strings.TrimPrefix(line, "!")
	if strings.HasSuffix(s, "/") {
		if !isDir {
			return false
		}
		s = s[:len(s)-1]
	}
	if s == "" {
		return false
	}
	match := wildmatch
	if len(s) <= 64 && len(relPath) <= 64 {
		match = refWildmatch
	}
	if !strings.Contains(s, "/") {
		return match(s, relPath[strings.LastIndexByte(relPath, '/')+1:], false)
	}
	s = strings.TrimPrefix(s, "/")
	n := literalLen(s)
	if !strings.HasPrefix(relPath, s[:n]) {
		return false
	}
	return match(s[n:], relPath[n:], true)
}
