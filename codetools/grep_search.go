package codetools

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"regexp/syntax"
	"strings"
	"unicode/utf8"
)

// The search engine behind grep: whole-block reads, bytes.Index on a
// literal every match must contain before any regular expression runs, and
// line boundaries found only around hits.

const (
	grepLineMax   = 500     // characters kept of a line
	grepBinaryWin = 8 << 10 // a NUL in the first 8 KiB makes a file binary
	grepBlockMin  = 1 << 20 // read size: most source files fit in one block
	grepBlockMax  = 8 << 20 // a longer line than this is searched in pieces
)

// grepQuery is a compiled pattern.
type grepQuery struct {
	re      *regexp.Regexp // multi-line mode; nil when lit alone decides
	lit     []byte         // a literal every matching line contains; nil if none
	context int
}

// newGrepQuery compiles pattern. An invalid regular expression is an error
// that says what is wrong with it.
func newGrepQuery(pattern string, literal, ignoreCase bool, context int) (*grepQuery, error) {
	q := &grepQuery{context: context}
	if literal && !ignoreCase {
		q.lit = []byte(pattern)
		return q, nil
	}
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	re, err := regexp.Compile(flags + expr)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("pattern %q is not a valid regular expression: %s in %q (Go RE2 syntax; pass literal=true to search for the text as it is)", pattern, se.Code, se.Expr)
		}
		return nil, fmt.Errorf("pattern %q is not a valid regular expression: %w", pattern, err)
	}
	q.re = re
	if !ignoreCase {
		if lit, pure := requiredLiteral(expr); pure && lit != "" && !strings.Contains(lit, "\n") {
			q.lit, q.re = []byte(lit), nil
		} else if len(lit) >= 2 {
			q.lit = []byte(lit)
		}
	}
	return q, nil
}

// requiredLiteral returns the longest case-sensitive literal that every
// match of expr contains, and whether expr is that literal and nothing else.
func requiredLiteral(expr string) (lit string, pure bool) {
	re, err := syntax.Parse(expr, syntax.Perl)
	if err != nil {
		return "", false
	}
	re = re.Simplify()
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	literal := func(r *syntax.Regexp) string {
		if r.Op == syntax.OpLiteral && r.Flags&syntax.FoldCase == 0 {
			return string(r.Rune)
		}
		return ""
	}
	switch re.Op {
	case syntax.OpLiteral:
		s := literal(re)
		return s, s != ""
	case syntax.OpConcat:
		for _, sub := range re.Sub {
			for sub.Op == syntax.OpCapture {
				sub = sub.Sub[0]
			}
			if s := literal(sub); len(s) > len(lit) {
				lit = s
			}
		}
	}
	return lit, false
}

// grepLine is one line of the answer: a match or a context line.
type grepLine struct {
	n     int
	text  string
	match bool
}

// grepFileResult is what one file gave.
type grepFileResult struct {
	rel     string
	lines   []grepLine
	matches int
}

// fileSearcher searches files one after another with one reusable buffer.
// It is not safe for concurrent use: each walker goroutine has its own.
type fileSearcher struct {
	q        *grepQuery
	buf      []byte
	limit    int // stop a file after this many matches
	maxBlock int // largest buffer; 0 means grepBlockMax

	// per-file state
	lines     []grepLine
	matches   int
	lastOut   int        // number of the last line put out, 0 for none
	afterLeft int        // context lines still owed after the last match
	tail      []grepLine // the last context lines of the previous blocks, newest first
	spare     []grepLine
}

// search reads r (a file) and returns its matching lines with their
// context, at most limit matches (plus one, to tell that there are more).
// Binary files give nothing.
func (s *fileSearcher) search(r io.Reader) ([]grepLine, int, error) {
	if s.buf == nil {
		s.buf = make([]byte, grepBlockMin)
	}
	s.lines, s.matches, s.lastOut, s.afterLeft, s.tail = nil, 0, 0, 0, s.tail[:0]
	carry, line, first := 0, 1, true
	for {
		n, err := io.ReadFull(r, s.buf[carry:])
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return nil, 0, err
		}
		data := s.buf[:carry+n]
		if first {
			first = false
			if bytes.IndexByte(data[:min(len(data), grepBinaryWin)], 0) >= 0 {
				return nil, 0, nil
			}
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
			if cut == 0 { // one line fills the buffer
				if len(s.buf) < s.blockMax() {
					s.buf = append(s.buf, make([]byte, len(s.buf))...)
					carry = len(data)
					continue
				}
				cut = len(data) // search it in pieces; the line number carries on
			}
		}
		block := data[:cut]
		if s.scan(block, line, !eof) {
			break
		}
		if eof {
			break
		}
		line += bytes.Count(block, []byte{'\n'})
		carry = copy(s.buf, data[cut:])
	}
	return s.lines, s.matches, nil
}

func (s *fileSearcher) blockMax() int {
	if s.maxBlock > 0 {
		return s.maxBlock
	}
	return grepBlockMax
}

// scan finds the matching lines of block, whose first line is number line,
// and puts them out with their context. It reports whether the limit is
// reached.
func (s *fileSearcher) scan(block []byte, line int, more bool) (full bool) {
	C := s.q.context
	pos := 0 // block offset of the start of line number `line`
	if C > 0 && s.afterLeft > 0 {
		// context lines owed from the previous block come first; a match
		// among them is put out by the loop below
		p, n := 0, line
		for s.afterLeft > 0 && p < len(block) {
			ls, le := p, lineEnd(block, p)
			if s.q.lineMatches(block[ls:le]) {
				break
			}
			s.out(n, block[ls:le], false)
			s.afterLeft--
			p, n = le+1, n+1
		}
	}
	for from := 0; from < len(block); {
		ls, le, ok := s.q.next(block, from)
		if !ok {
			break
		}
		n := line + bytes.Count(block[pos:ls], []byte{'\n'})
		pos, line = ls, n
		if C > 0 {
			s.before(block, ls, n, C)
		}
		s.out(n, block[ls:le], true)
		s.matches++
		if s.matches > s.limit {
			return true
		}
		from = le + 1
		if C > 0 {
			s.afterLeft = C
			p, m := le+1, n+1
			for s.afterLeft > 0 && p < len(block) {
				ae := lineEnd(block, p)
				if s.q.lineMatches(block[p:ae]) {
					break
				}
				s.out(m, block[p:ae], false)
				s.afterLeft--
				p, m = ae+1, m+1
			}
			from = p
			pos, line = p, m
			if p > len(block) {
				pos = len(block)
			}
		}
	}
	if C > 0 && more && len(block) > 0 {
		// keep the last C lines, newest first, for the next block's
		// before-context; a short block keeps older ones too
		body := block
		last := line + bytes.Count(block[min(pos, len(block)):], []byte{'\n'})
		if body[len(body)-1] == '\n' {
			body = body[:len(body)-1]
			last--
		}
		next := s.spare[:0]
		for end, k := len(body), 0; k < C; k++ {
			st := bytes.LastIndexByte(body[:end], '\n') + 1
			next = append(next, grepLine{n: last - k, text: cutLine(body[st:end])})
			if st == 0 {
				break
			}
			end = st - 1
		}
		for _, t := range s.tail {
			if len(next) == C {
				break
			}
			next = append(next, t)
		}
		s.tail, s.spare = next, s.tail
	}
	return false
}

// before puts out up to C context lines before the match at offset ls
// (line n), not repeating lines already put out.
func (s *fileSearcher) before(block []byte, ls, n, C int) {
	want := max(n-C, s.lastOut+1, 1)
	if want >= n {
		return
	}
	// walk back from ls to the start of line `want`
	starts := make([]int, 0, C)
	p := ls
	for k := n; k > want && p > 0; k-- {
		p = bytes.LastIndexByte(block[:p-1], '\n') + 1
		starts = append(starts, p)
	}
	if missing := n - want - len(starts); missing > 0 {
		for i := len(s.tail) - 1; i >= 0; i-- { // oldest first
			if t := s.tail[i]; t.n >= want && t.n > s.lastOut {
				s.lines = append(s.lines, t)
				s.lastOut = t.n
			}
		}
	}
	for i := len(starts) - 1; i >= 0; i-- {
		st := starts[i]
		s.out(n-i-1, block[st:lineEnd(block, st)], false)
	}
}

func (s *fileSearcher) out(n int, text []byte, match bool) {
	if n <= s.lastOut {
		return
	}
	s.lines = append(s.lines, grepLine{n: n, text: cutLine(text), match: match})
	s.lastOut = n
}

// next finds the first matching line at or after offset from, as the
// offsets of its start and of its end (its '\n', or len(block)).
func (q *grepQuery) next(block []byte, from int) (ls, le int, ok bool) {
	for from < len(block) {
		var at int
		switch {
		case q.lit != nil:
			i := bytes.Index(block[from:], q.lit)
			if i < 0 {
				return 0, 0, false
			}
			at = from + i
		default:
			loc := q.re.FindIndex(block[from:])
			if loc == nil {
				return 0, 0, false
			}
			at = from + loc[0]
			if at == len(block) { // an empty match at the very end
				return 0, 0, false
			}
		}
		ls = bytes.LastIndexByte(block[:at], '\n') + 1
		le = lineEnd(block, at)
		if q.re == nil || q.re.Match(block[ls:le]) {
			return ls, le, true
		}
		from = le + 1
	}
	return 0, 0, false
}

// lineMatches reports whether one line (without its '\n') matches.
func (q *grepQuery) lineMatches(line []byte) bool {
	if q.lit != nil && !bytes.Contains(line, q.lit) {
		return false
	}
	return q.re == nil || q.re.Match(line)
}

func lineEnd(block []byte, p int) int {
	if i := bytes.IndexByte(block[p:], '\n'); i >= 0 {
		return p + i
	}
	return len(block)
}

// cutLine returns a line as text: without "\r", at most grepLineMax
// characters, invalid UTF-8 replaced.
func cutLine(b []byte) string {
	b = bytes.TrimSuffix(b, []byte{'\r'})
	if len(b) <= grepLineMax && utf8.Valid(b) {
		return string(b)
	}
	s := strings.ToValidUTF8(string(b[:min(len(b), 4*grepLineMax)]), "\uFFFD")
	if utf8.RuneCountInString(s) <= grepLineMax && len(b) <= 4*grepLineMax {
		return s
	}
	i, k := 0, 0
	for k < grepLineMax && i < len(s) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
		k++
	}
	return s[:i] + "... [truncated]"
}
