package search

import (
	"io"
	"regexp/syntax"
	"unicode/utf8"
)

// The work of grep's regular expression, checked against the call's
// context. Go's regexp has no DFA: on a long input it runs an NFA whose
// work per byte grows with the size of its program, up to one step per
// instruction: `\w{1000}c` on a 1 MiB line is some 10⁹ steps, a minute,
// and a 3,000-branch alternation is as slow on any text. So every run of
// the expression is counted, as its length times the program's size (an
// upper bound of the NFA's steps), and the context is checked each time
// the count passes grepWorkCheck; a single run that could pass it (a long
// line) reads its input through grepWorkReader, which checks the context
// every grepWorkCheck/size runes. A deadline thus stops grep within about
// grepWorkCheck steps, whatever the pattern and the line.

// grepWorkCheck is the work (bytes times instructions) between two checks
// of the context: a few tens of milliseconds at most.
const grepWorkCheck = 1 << 20

// programSize returns the number of instructions of re's program, as
// regexp compiles it; at least 1.
func programSize(re *syntax.Regexp) int {
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return 1
	}
	return max(1, len(prog.Inst))
}

// checkEvery is the number of runes a run of q reads between two checks
// of the context.
func (q *Query) checkEvery() int {
	return max(64, grepWorkCheck/max(q.insts, 1))
}

// spend counts the work of one run of the expression over n bytes and
// checks the context each time the count passes grepWorkCheck. It reports
// false, and keeps the context's error in s.err, once the context ended.
func (s *Searcher) spend(n int) bool {
	if s.err != nil {
		return false
	}
	if s.ctx == nil {
		return true
	}
	if s.work += n * s.q.insts; s.work < grepWorkCheck {
		return true
	}
	s.work = 0
	s.err = s.ctx.Err()
	return s.err == nil
}

// match reports whether b holds a match of the expression, checking the
// context as the work goes (see spend); false once it ended.
func (s *Searcher) match(b []byte) bool {
	if !s.spend(len(b)) {
		return false
	}
	if s.ctx == nil || len(b)*s.q.insts <= grepWorkCheck {
		return s.q.re.Match(b)
	}
	r := s.workReader(b)
	ok := s.q.re.MatchReader(r)
	if r.err != nil {
		s.err = r.err
		return false
	}
	return ok
}

// findIndex is [regexp.Regexp.FindIndex] with the checks of match; nil
// once the context ended.
func (s *Searcher) findIndex(b []byte) []int {
	if !s.spend(len(b)) {
		return nil
	}
	if s.ctx == nil || len(b)*s.q.insts <= grepWorkCheck {
		return s.q.re.FindIndex(b)
	}
	r := s.workReader(b)
	loc := s.q.re.FindReaderIndex(r)
	if r.err != nil {
		s.err = r.err
		return nil
	}
	return loc
}

func (s *Searcher) workReader(b []byte) *grepWorkReader {
	every := s.q.checkEvery()
	return &grepWorkReader{s: s, b: b, every: every, left: every}
}

// grepWorkReader reads b as runes, as the regexp package decodes a byte
// slice, and checks the searcher's context every `every` runes: at its
// end, the input ends (err says why).
type grepWorkReader struct {
	s           *Searcher
	b           []byte
	pos         int
	every, left int
	err         error
}

// ReadRune implements [io.RuneReader].
func (r *grepWorkReader) ReadRune() (rune, int, error) {
	if r.pos >= len(r.b) {
		return 0, 0, io.EOF
	}
	if r.left--; r.left < 0 {
		r.left = r.every
		if r.err = r.s.ctx.Err(); r.err != nil {
			r.pos = len(r.b)
			return 0, 0, io.EOF
		}
	}
	if c := r.b[r.pos]; c < utf8.RuneSelf {
		r.pos++
		return rune(c), 1, nil
	}
	c, size := utf8.DecodeRune(r.b[r.pos:])
	r.pos += size
	return c, size, nil
}
