package toolsearch

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// literals returns strings, in folded form ([fold]), one of which every
// match of re contains; nil when there is no such set. A document that
// holds none of them cannot match, so most documents are ruled out by a
// substring test before the regular expression runs.
func literals(re *syntax.Regexp) []string {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{fold(string(re.Rune))}
	case syntax.OpCapture, syntax.OpPlus:
		return literals(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return literals(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []string
		for _, sub := range re.Sub {
			if set := literals(sub); set != nil && (best == nil || shortest(set) > shortest(best)) {
				best = set
			}
		}
		return best
	case syntax.OpAlternate:
		var all []string
		for _, sub := range re.Sub {
			set := literals(sub)
			if set == nil {
				return nil
			}
			all = append(all, set...)
		}
		return all
	}
	return nil
}

// shortest is the length of the shortest string of set.
func shortest(set []string) int {
	n := -1
	for _, s := range set {
		if n < 0 || len(s) < n {
			n = len(s)
		}
	}
	return n
}

// fold maps each rune of s to the smallest rune of its simple case-folding
// orbit, the equivalence that a case-insensitive regular expression uses:
// two strings that match each other without regard to case fold to the
// same string.
func fold(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
			b.WriteRune(r)
			continue
		}
		low := r
		for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
			low = min(low, f)
		}
		b.WriteRune(low)
	}
	return b.String()
}

// containsAny reports whether s contains one of set.
func containsAny(s string, set []string) bool {
	for _, lit := range set {
		if strings.Contains(s, lit) {
			return true
		}
	}
	return false
}
