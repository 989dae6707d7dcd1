package gitignore

import "strings"

// Results of dowild. The two abort results let a "*" stop trying other
// alignments as soon as none can match, the pruning git's wildmatch does
// since git 2.41. A "*" that fails never answers wmNoMatch: it has tried
// every alignment of the text left to it, and an outer "*" can only hand it
// a shorter text (a suffix of this one), which fails too. So each "*" gives
// up at once when the one after it does, and matching takes time
// proportional to the pattern's length times the text's, where the plain
// backtracking of older ports took exponential time ("*a*a*a*a...b" against
// "aaaa...").
const (
	wmMatch           = iota
	wmNoMatch         // this alignment fails; a "*" may try another
	wmAbortAll        // no alignment of any suffix of the text can match
	wmAbortToStarStar // a "*" cannot cross a "/"; only an outer "**" may retry
)

// wildmatch reports whether text matches the glob pattern with git's rules
// for .gitignore (wildmatch with WM_PATHNAME when pathname is true: "*", "?"
// and brackets never match "/", and "**" between slashes or at either end
// of the pattern matches across folders). Without pathname, "**" is "*" and
// every wildcard matches "/".
func wildmatch(pattern, text string, pathname bool) bool {
	return dowild(pattern, text, pathname) == wmMatch
}

// byteAt returns s[i], or 0 past the end of s. Patterns never contain NUL
// (ParsePatterns cuts lines at a NUL byte, as git does), so in a pattern 0
// means "end". Texts are checked against their length instead, so that a
// NUL in a path is an ordinary byte.
func byteAt(s string, i int) byte {
	if i < len(s) {
		return s[i]
	}
	return 0
}

// isGlobSpecial reports whether c starts a wildcard or an escape.
func isGlobSpecial(c byte) bool {
	return c == '*' || c == '?' || c == '[' || c == '\\'
}

func dowild(p, text string, pathname bool) int {
	pi, ti := 0, 0
	for ; pi < len(p); pi, ti = pi+1, ti+1 {
		pc := p[pi]
		if ti >= len(text) && pc != '*' {
			return wmAbortAll
		}
		tc := byteAt(text, ti)
		switch pc {
		case '\\':
			// The next pattern byte is literal; a trailing "\" matches nothing.
			pi++
			if pi >= len(p) || p[pi] != tc {
				return wmNoMatch
			}
		case '?':
			if pathname && tc == '/' {
				return wmNoMatch
			}
		case '[':
			end, ok, abort := matchBracket(p, pi+1, tc)
			if abort {
				return wmAbortAll
			}
			if !ok || (pathname && tc == '/') {
				return wmNoMatch
			}
			pi = end
		case '*':
			r, done := matchStar(p, pi, text, ti, pathname)
			if done {
				return r
			}
			// "*/" with pathname: matchStar moved past the next folder name;
			// r is the new text index of its "/", which the loop consumes
			// together with the "/" of the pattern.
			pi, ti = nextSlash(p, pi), r
		default:
			if tc != pc {
				return wmNoMatch
			}
		}
	}
	if ti < len(text) {
		return wmNoMatch
	}
	return wmMatch
}

// nextSlash returns the index of the "/" that follows the run of "*" at pi.
func nextSlash(p string, pi int) int {
	for pi < len(p) && p[pi] == '*' {
		pi++
	}
	return pi
}

// matchStar matches the run of "*" starting at p[pi] against text[ti:].
// It returns (result, true) when the match is decided, or (index of the next
// "/" in text, false) for a single "*" followed by "/" under pathname, which
// dowild continues from.
func matchStar(p string, pi int, text string, ti int, pathname bool) (int, bool) {
	star := pi
	pi++
	matchSlash := !pathname
	if byteAt(p, pi) == '*' {
		for pi < len(p) && p[pi] == '*' {
			pi++
		}
		switch {
		case !pathname:
			matchSlash = true
		case (star == 0 || p[star-1] == '/') &&
			(pi == len(p) || p[pi] == '/' || (p[pi] == '\\' && byteAt(p, pi+1) == '/')):
			// A real "**": first let "**/" match no folder at all, so that
			// "a/**/b" matches "a/b". If the rest cannot match even from
			// here, its earliest start, no later start can either: stop,
			// rather than search the text again below, which would double
			// the time with each "**/" of a chain like "a/**/**/**/b".
			if byteAt(p, pi) == '/' {
				if r := dowild(p[pi+1:], text[ti:], pathname); r == wmMatch || r == wmAbortAll {
					return r, true
				}
			}
			matchSlash = true
		default:
			// "**" next to other characters is just "*".
			matchSlash = false
		}
	}
	if pi == len(p) {
		// A trailing "**" matches everything; a trailing "*" the rest of
		// the current name only.
		if !matchSlash && strings.IndexByte(text[ti:], '/') >= 0 {
			// Only an outer "**" can take the "/" left over.
			return wmAbortToStarStar, true
		}
		return wmMatch, true
	}
	if !matchSlash && p[pi] == '/' {
		// A single "*" before "/" matches the rest of this name.
		j := strings.IndexByte(text[ti:], '/')
		if j < 0 {
			// No "/" left, nor in any shorter text.
			return wmAbortAll, true
		}
		return ti + j, false
	}
	rest := p[pi:]
	for ti < len(text) {
		if c := rest[0]; !isGlobSpecial(c) {
			// Skip ahead to the next occurrence of the literal that follows
			// the star; a single "*" cannot look past a "/".
			for ti < len(text) && text[ti] != c && (matchSlash || text[ti] != '/') {
				ti++
			}
			if byteAt(text, ti) != c {
				// The literal is not in the rest of the text (or, for a
				// single "*", of this name): no later start can find it,
				// so the whole match fails, or an outer "**" retries
				// past the "/".
				if matchSlash {
					return wmAbortAll, true
				}
				return wmAbortToStarStar, true
			}
		}
		r := dowild(rest, text[ti:], pathname)
		if r != wmNoMatch {
			if !matchSlash || r != wmAbortToStarStar {
				return r, true
			}
		} else if !matchSlash && text[ti] == '/' {
			return wmAbortToStarStar, true
		}
		ti++
	}
	return wmAbortAll, true
}

// matchBracket matches byte c against the bracket expression whose body
// starts at p[pi] (just after "["). It returns the index of the closing "]",
// whether c is in the set (negation applied), and abort when the expression
// is unterminated or names an unknown class, in which case git's wildmatch
// gives up on the whole pattern.
func matchBracket(p string, pi int, c byte) (end int, ok bool, abort bool) {
	pc := byteAt(p, pi)
	if pc == '^' {
		pc = '!'
	}
	negated := pc == '!'
	if negated {
		pi++
		pc = byteAt(p, pi)
	}
	var prev byte
	matched := false
	for {
		if pc == 0 {
			return 0, false, true
		}
		switch {
		case pc == '\\':
			pi++
			pc = byteAt(p, pi)
			if pc == 0 {
				return 0, false, true
			}
			if c == pc {
				matched = true
			}
		case pc == '-' && prev != 0 && byteAt(p, pi+1) != 0 && p[pi+1] != ']':
			pi++
			pc = p[pi]
			if pc == '\\' {
				pi++
				pc = byteAt(p, pi)
				if pc == 0 {
					return 0, false, true
				}
			}
			if c >= prev && c <= pc {
				matched = true
			}
			pc = 0 // a range cannot start a new range
		case pc == '[' && byteAt(p, pi+1) == ':':
			start := pi + 2
			j := start
			for j < len(p) && p[j] != ']' {
				j++
			}
			if j == len(p) {
				return 0, false, true
			}
			if j-start < 1 || p[j-1] != ':' {
				// No ":]": a plain "[" in the set.
				if c == '[' {
					matched = true
				}
				pc = '['
				break
			}
			in, known := inClass(p[start:j-1], c)
			if !known {
				return 0, false, true
			}
			if in {
				matched = true
			}
			pi = j
			pc = 0
		default:
			if c == pc {
				matched = true
			}
		}
		prev = pc
		pi++
		pc = byteAt(p, pi)
		if pc == ']' {
			return pi, matched != negated, false
		}
	}
}

// inClass reports whether c belongs to the POSIX class name (ASCII only, as
// in git), and whether the class is known.
func inClass(name string, c byte) (in, known bool) {
	lower := c >= 'a' && c <= 'z'
	upper := c >= 'A' && c <= 'Z'
	digit := c >= '0' && c <= '9'
	graph := c > ' ' && c < 0x7f
	switch name {
	case "alnum":
		return lower || upper || digit, true
	case "alpha":
		return lower || upper, true
	case "blank":
		return c == ' ' || c == '\t', true
	case "cntrl":
		return c < ' ' || c == 0x7f, true
	case "digit":
		return digit, true
	case "graph":
		return graph, true
	case "lower":
		return lower, true
	case "print":
		return graph || c == ' ', true
	case "punct":
		return graph && !lower && !upper && !digit, true
	case "space":
		return c == ' ' || (c >= '\t' && c <= '\r'), true
	case "upper":
		return upper, true
	case "xdigit":
		return digit || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'), true
	}
	return false, false
}
