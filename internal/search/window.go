package search

import (
	"regexp/syntax"
	"unicode/utf8"
)

// Long lines, tested in windows: a pattern whose matches are at most span
// bytes long and that has no empty-width assertion (^, $, \b, \B) matches
// a line if and only if it matches within span bytes of one of the hits of
// its prefilter (every match holds a needle, or starts with a byte of the
// set). On a line longer than grepLongLine the regular expression runs on
// those windows only, instead of the whole line: Go's regexp has no DFA,
// and a long line (minified JavaScript, generated tables) would go through
// its NFA byte by byte. Windows start and end on rune boundaries, so the
// runes inside decode as they do in the whole line.

const (
	grepLongLine = 1024 // a line longer than this is tested in windows
	grepSpanMax  = 256  // the longest match span worth windows
)

// matchSpan returns the most bytes a match of re can take, or 0 when
// matches can be longer than grepSpanMax or re holds an empty-width
// assertion, whose answer depends on the bytes beside the window.
func matchSpan(re *syntax.Regexp) int {
	n, ok := spanOf(re)
	if !ok || n > grepSpanMax {
		return 0
	}
	return n
}

func spanOf(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpEmptyMatch, syntax.OpNoMatch:
		return 0, true
	case syntax.OpLiteral:
		return utf8.UTFMax * len(re.Rune), true // case variants differ in length
	case syntax.OpCharClass, syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		return utf8.UTFMax, true
	case syntax.OpCapture, syntax.OpQuest:
		return spanOf(re.Sub[0])
	case syntax.OpRepeat:
		n, ok := spanOf(re.Sub[0])
		if !ok || re.Max < 0 || re.Max > grepSpanMax {
			return 0, false
		}
		return n * re.Max, n*re.Max <= grepSpanMax
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n, ok := spanOf(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
			if total > grepSpanMax {
				return 0, false
			}
		}
		return total, true
	}
	return 0, false // star, plus, assertions
}

// windowMatch reports whether the line [ls, le) of block, whose first hit
// is at, matches, testing the windows around its hits. A window starts
// span bytes before its hit and reaches at least four spans past it, so
// that close hits share one; a hit whose matches all lie in windows tested
// already is skipped. The windows overlap by less than half, so a line is
// read at most about twice.
func (s *Searcher) windowMatch(block []byte, ls, le, at int) bool {
	span := s.q.span
	reach := max(4*span, s.q.longLine/4)
	tested := ls // a match that starts before tested-span lies in a window tested already
	for at >= 0 && at < le {
		a := max(ls, at-span, tested-span)
		b := min(le, max(at+span, at+reach))
		for a > ls && !utf8.RuneStart(block[a]) {
			a--
		}
		for b < le && !utf8.RuneStart(block[b]) {
			b++
		}
		if s.match(block[a:b]) {
			return true
		}
		if s.err != nil {
			return false
		}
		tested = b
		// the next hit whose matches can end past b
		var sure bool
		if at, sure = s.cur.next(max(at+1, b-span+1)); sure && at >= 0 && at < le {
			return true
		}
	}
	return false
}
