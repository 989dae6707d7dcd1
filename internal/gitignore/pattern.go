package gitignore

import (
	"bytes"
	"strings"
)

// kind is how a compiled pattern is matched.
type kind uint8

const (
	never        kind = iota // matches nothing: the zero Pattern, "!", "/"
	baseExact                // the name equals lit: "name", "name/"
	baseSuffix               // the name ends with lit: "*.o"
	basePrefix               // the name starts with lit: "build*"
	baseGlob                 // the name matches glob: "*.[oa]", "a?c"
	pathExact                // the path below base equals lit: "/build", "a/b"
	pathUnder                // the path below base starts with lit: "/**", "abc/**"
	pathAnyDepth             // the path below base is lit or ends in "/"+lit: "**/foo"
	pathGlob                 // the path below base starts with lit, rest matches glob
)

// Pattern is one compiled line of a .gitignore file. Its zero value matches
// nothing. Patterns are immutable and safe for concurrent use.
type Pattern struct {
	text    string // the line as written, after trimming
	base    string // folder of the .gitignore, "" for the walk root
	lit     string // literal part (see kind)
	glob    string // wildcard part, for baseGlob and pathGlob
	tail    string // literal end every match of glob has, to reject cheaply
	needle  string // literal every match of glob contains, to reject cheaply
	kind    kind
	negate  bool // "!pattern"
	dirOnly bool // "pattern/"
}

// utf8BOM is skipped at the start of a .gitignore file, as git does.
var utf8BOM = []byte{0xef, 0xbb, 0xbf}

// ParsePatterns compiles the content of the .gitignore file found in folder
// base, a slash-separated path relative to the walk root ("" or "." for the
// root itself). Lines that hold no pattern (blank lines, comments) are left
// out, so the result is empty for a file without patterns. Patterns are
// returned in file order; the last one that matches a path decides.
func ParsePatterns(base string, data []byte) []Pattern {
	base = cleanBase(base)
	data = bytes.TrimPrefix(data, utf8BOM)
	var out []Pattern
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		line = bytes.TrimSuffix(line, []byte{'\r'})
		if i := bytes.IndexByte(line, 0); i >= 0 {
			line = line[:i] // git reads each line as a C string
		}
		if p := compile(base, trimTrailingSpaces(string(line))); p.kind != never {
			out = append(out, p)
		}
	}
	return out
}

// cleanBase turns a folder path into the form patterns store: no leading or
// trailing slash, "" for the root.
func cleanBase(base string) string {
	base = strings.Trim(base, "/")
	if base == "." {
		return ""
	}
	return strings.TrimPrefix(base, "./")
}

// trimTrailingSpaces drops trailing spaces unless the last one is escaped
// with a backslash ("foo\ " keeps one space). Tabs are kept, as in git.
func trimTrailingSpaces(s string) string {
	end := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ':
			continue
		case '\\':
			i++
			if i == len(s) {
				return s // a lone trailing backslash: keep everything
			}
		}
		end = i + 1
	}
	return s[:end]
}

// compile turns one trimmed line into a Pattern.
func compile(base, line string) Pattern {
	p := Pattern{text: line, base: base}
	s := line
	if strings.HasPrefix(s, "!") {
		p.negate = true
		s = s[1:]
	}
	if strings.HasSuffix(s, "/") {
		p.dirOnly = true
		s = s[:len(s)-1]
	}
	if s == "" {
		return p
	}
	if strings.IndexByte(s, '/') < 0 {
		// No slash: the pattern matches a name at any depth.
		switch {
		case !hasWildcard(s):
			p.kind, p.lit = baseExact, s
		case s[0] == '*' && !hasWildcard(s[1:]):
			p.kind, p.lit = baseSuffix, s[1:]
		case s[len(s)-1] == '*' && !hasWildcard(s[:len(s)-1]):
			p.kind, p.lit = basePrefix, s[:len(s)-1]
		default:
			p.kind, p.glob, p.tail, p.needle = baseGlob, s, literalTail(s), literalNeedle(s)
		}
		return p
	}
	// A slash at the start or in the middle: anchored to base.
	s = strings.TrimPrefix(s, "/")
	if s == "" {
		return p
	}
	n := literalLen(s)
	lit, rest := s[:n], s[n:]
	switch {
	case rest == "":
		p.kind, p.lit = pathExact, s
	case (lit == "" || lit[len(lit)-1] == '/') && allStars(rest) && len(rest) >= 2:
		p.kind, p.lit = pathUnder, lit
	case lit == "" && strings.HasPrefix(rest, "**/") && len(rest) > 3 && !hasWildcard(rest[3:]):
		p.kind, p.lit = pathAnyDepth, rest[3:]
	default:
		// Like git, match the literal prefix directly and run wildmatch on
		// the rest only; "**" at the start of the rest counts as following
		// a slash, as it does in git.
		p.kind, p.lit, p.glob = pathGlob, lit, rest
		p.tail, p.needle = literalTail(rest), literalNeedle(rest)
	}
	return p
}

// literalNeedle returns the longest run of plain characters before the
// first "[" or "\\" of glob: up to there only "*" and "?" have a meaning, so
// such a run matches itself somewhere in any matching text.
func literalNeedle(glob string) string {
	var best string
	start := 0
	for i := 0; i <= len(glob); i++ {
		if i < len(glob) && !isGlobSpecial(glob[i]) {
			continue
		}
		if run := trimStarSlash(glob, start, i); len(run) > len(best) {
			best = run
		}
		if i < len(glob) && (glob[i] == '[' || glob[i] == '\\') {
			break
		}
		start = i + 1
	}
	return best
}

// literalTail returns the run of plain characters that ends glob: a text
// matching glob must end with it, since each of those pattern characters
// matches itself and the match covers the whole text. The run stops at any
// character with a meaning in a glob, "]" included, so it never reaches
// into a bracket expression or an escape.
func literalTail(glob string) string {
	i := len(glob)
	for i > 0 && !isGlobSpecial(glob[i-1]) && glob[i-1] != ']' {
		i--
	}
	return trimStarSlash(glob, i, len(glob))
}

// trimStarSlash returns glob[start:end] without the "/" it starts with right
// after a "*": "**/" may match no folder at all, and the "/" then matches
// nothing in the text.
func trimStarSlash(glob string, start, end int) string {
	if start > 0 && start < end && glob[start-1] == '*' && glob[start] == '/' {
		start++
	}
	return glob[start:end]
}

// literalLen returns the length of the prefix of s without wildcards.
func literalLen(s string) int {
	for i := 0; i < len(s); i++ {
		if isGlobSpecial(s[i]) {
			return i
		}
	}
	return len(s)
}

func hasWildcard(s string) bool { return literalLen(s) < len(s) }

func allStars(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '*' {
			return false
		}
	}
	return true
}

// String returns the pattern as written in its .gitignore, after trimming.
func (p Pattern) String() string { return p.text }

// Base returns the folder of the pattern's .gitignore ("" for the walk root).
func (p Pattern) Base() string { return p.base }

// Negated reports whether the pattern starts with "!", so that a path it
// matches is re-included rather than ignored.
func (p Pattern) Negated() bool { return p.negate }

// Match reports whether the pattern matches relPath (slash-separated,
// relative to the walk root), regardless of negation. isDir tells whether
// the path is a folder. A pattern only matches paths below its base.
func (p Pattern) Match(relPath string, isDir bool) bool {
	return p.match(relPath, relPath[strings.LastIndexByte(relPath, '/')+1:], isDir)
}

// match is Match with the path's last element already split off.
func (p *Pattern) match(rel, name string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if n := len(p.base); n > 0 {
		if len(rel) <= n || rel[n] != '/' || rel[:n] != p.base {
			return false
		}
		rel = rel[n+1:]
	}
	switch p.kind {
	case baseExact:
		return name == p.lit
	case baseSuffix:
		return strings.HasSuffix(name, p.lit)
	case basePrefix:
		return strings.HasPrefix(name, p.lit)
	case baseGlob:
		return strings.HasSuffix(name, p.tail) && strings.Contains(name, p.needle) &&
			wildmatch(p.glob, name, false)
	case pathExact:
		return rel == p.lit
	case pathUnder:
		return strings.HasPrefix(rel, p.lit)
	case pathAnyDepth:
		return strings.HasSuffix(rel, p.lit) &&
			(len(rel) == len(p.lit) || rel[len(rel)-len(p.lit)-1] == '/')
	case pathGlob:
		return strings.HasSuffix(rel, p.tail) && strings.HasPrefix(rel, p.lit) &&
			strings.Contains(rel[len(p.lit):], p.needle) &&
			wildmatch(p.glob, rel[len(p.lit):], true)
	}
	return false
}
