package search

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"regexp"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// The sizes of a searcher's buffer: it reads BlockMin bytes at a time (most
// source files fit in one block: 72 of the 11.5k files of Go's src are
// larger), grows up to BlockMax for a longer line (for that file only),
// and streams a line longer than BlockMax through the regular expression.
// Each call's searchers start with fresh buffers, whose pages the first
// reads fault in: a smaller block costs a grep less than the few more
// reads of large files.
const (
	BlockMin = 256 << 10
	BlockMax = 8 << 20
)

const (
	grepLineMax   = 500     // characters kept of a line
	grepBinaryWin = 8 << 10 // a NUL in the first 8 KiB makes a file binary
	// whole lines searched by one regexp call: short enough for Go's
	// backtracker (programs up to 128 instructions), about twice as fast
	// as its NFA, which runs on longer inputs
	grepWindow = 2 << 10
)

// Query is a compiled pattern.
type Query struct {
	re       *regexp.Regexp // the whole pattern for one line; never crosses a line break
	pre      *grepPrefilter // finds candidate lines for re; nil: re runs over windows
	pureLit  []byte         // the pattern is this exact literal: long lines are searched for it
	window   int            // bytes of whole lines per call of re: grepWindow
	span     int            // the longest match in bytes, 0 for none known (see window.go)
	insts    int            // instructions of re's program: the work per byte of its NFA (work.go)
	longLine int            // with span, a line longer than this is tested in windows: grepLongLine
	context  int
}

// ErrNewline is the error for a pattern that can only match a line
// break: grep matches one line at a time, as ripgrep does by default.
var ErrNewline = errors.New("grep matches one line at a time, so a pattern cannot match a line break")

// Compile compiles pattern (a Go regular expression, or plain text when
// literal is set) for a search that shows context lines around each match.
// An invalid regular expression is an error that says what is wrong with
// it; a pattern that can only match a line break wraps [ErrNewline].
//
// The regular expression is made line-oriented the way ripgrep does it: a
// line break is removed from every class ([^q], \s, (?s).), \A and \z
// become ^ and $, and a literal line break is refused. Such an expression
// never matches across a line break, so a block of lines is searched once
// from end to end and every match lies inside the line it is reported on.
func Compile(pattern string, literal, ignoreCase bool, context int) (*Query, error) {
	q := &Query{context: context, window: grepWindow, longLine: grepLongLine}
	if literal && strings.Contains(pattern, "\n") {
		return nil, fmt.Errorf("pattern %q: %w: search for one line of it", pattern, ErrNewline)
	}
	expr := pattern
	if literal {
		expr = regexp.QuoteMeta(pattern)
	}
	flags := "(?m)"
	if ignoreCase {
		flags = "(?mi)"
	}
	parsed, err := syntax.Parse(flags+expr, syntax.Perl)
	if err != nil {
		var se *syntax.Error
		if errors.As(err, &se) {
			return nil, fmt.Errorf("pattern %q is not a valid regular expression: %s in %q (Go RE2 syntax; pass literal=true to search for the text as it is)", pattern, se.Code, se.Expr)
		}
		return nil, fmt.Errorf("pattern %q is not a valid regular expression: %w", pattern, err)
	}
	if !lineOnly(parsed) {
		return nil, fmt.Errorf("pattern %q: %w: remove the \\n, or search for one line of the text", pattern, ErrNewline)
	}
	re, err := regexp.Compile(parsed.String())
	if err != nil { // not expected: String gives back what Parse accepts
		return nil, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	q.re, q.pre = re, newGrepPrefilter(parsed)
	q.pre.settle()
	q.span = matchSpan(parsed)
	q.insts = programSize(parsed)
	if l, ok := literalOnly(parsed); ok && !l.fold && !slices.Contains(l.runes, utf8.RuneError) {
		q.pureLit = []byte(string(l.runes))
	}
	return q, nil
}

// lineOnly rewrites re in place so that it never matches a line break: the
// break leaves every class, (?s). becomes ., \A and \z become ^ and $ of
// (?m). It reports false when re holds a literal line break, which no line
// contains.
func lineOnly(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpLiteral:
		if slices.Contains(re.Rune, '\n') {
			return false
		}
	case syntax.OpCharClass:
		re.Rune = classWithoutNewline(re.Rune)
		if len(re.Rune) == 0 {
			*re = syntax.Regexp{Op: syntax.OpNoMatch}
		}
	case syntax.OpAnyChar:
		re.Op = syntax.OpAnyCharNotNL
	case syntax.OpBeginText:
		re.Op = syntax.OpBeginLine
	case syntax.OpEndText:
		re.Op, re.Flags = syntax.OpEndLine, re.Flags&^syntax.WasDollar
	}
	for _, sub := range re.Sub {
		if !lineOnly(sub) {
			return false
		}
	}
	return true
}

// classWithoutNewline returns the ranges of a class (lo, hi pairs) without
// '\n'.
func classWithoutNewline(ranges []rune) []rune {
	out := make([]rune, 0, len(ranges)+2)
	for i := 0; i+1 < len(ranges); i += 2 {
		lo, hi := ranges[i], ranges[i+1]
		if lo > '\n' || hi < '\n' {
			out = append(out, lo, hi)
			continue
		}
		if lo < '\n' {
			out = append(out, lo, '\n'-1)
		}
		if hi > '\n' {
			out = append(out, '\n'+1, hi)
		}
	}
	return out
}

// grepLine is a context line kept from a previous block (Searcher.tail).
type grepLine struct {
	n    int
	text string
}

// FileResult is what one file gave: its lines of the answer, already
// written as grep shows them but for the path in front of each ("-N- text"
// for a context line, ":N: text" for a match, "--" between groups, each
// ending in '\n'; the answer puts rel before every line but "--"), how many
// lines of text it holds, "--" left out, and how many of them match. rel is
// set by [Collector.Add].
type FileResult struct {
	rel     string
	text    string
	lines   int
	matches int
}

// Searcher searches files one after another with one reusable buffer.
// The lines of the files it searched are kept in chunks it shares out
// (see keep): a [FileResult]'s text keeps its chunk alive.
// It is not safe for concurrent use: each walker goroutine has its own.
type Searcher struct {
	q        *Query
	buf      []byte
	limit    int // stop a file after this many matches
	maxText  int // stop writing a file's lines past this many bytes (the answer's cap); 0: no cap
	maxBlock int // largest buffer; 0 means BlockMax

	// per-file state
	ctx       context.Context // the call's, checked while a costly run of re goes (work.go)
	err       error           // the context's error, once a run of re stopped on it
	work      int             // work of re since the context was last checked (work.go)
	out       []byte          // the file's lines of the answer so far (FileResult.text), after arena's
	arena     []byte          // the lines of the files searched before: out is written in its spare capacity
	lines     int             // lines in out, "--" left out
	matches   int
	cur       grepCursor // the prefilter's state in the current block
	head      []byte     // the start of a line too long for the buffer
	lastOut   int        // number of the last line put out, 0 for none
	afterLeft int        // context lines still owed after the last match
	tail      []grepLine // the last context lines of the previous blocks, newest first
	spare     []grepLine
}

// NewSearcher returns a searcher for q that stops a file after limit
// matches (it counts one more, to tell that there are more) and stops
// writing a file's lines past maxText bytes (the answer's cap; 0 for no
// cap): its matches are still counted.
func NewSearcher(q *Query, limit, maxText int) *Searcher {
	return &Searcher{q: q, limit: limit, maxText: maxText}
}

// Search reads r (a file) and returns its matching lines with their
// context as they are shown (see FileResult): at most limit matches (plus
// one, to tell that there are more).
// Binary files give nothing. It checks ctx before every block and while it
// reads a long line, and returns ctx's error, wrapped, when it ends first.
func (s *Searcher) Search(ctx context.Context, r io.Reader) (FileResult, error) {
	if s.buf == nil {
		s.buf = make([]byte, BlockMin)
	}
	if len(s.buf) > BlockMin {
		// the buffer grew for a long line of the last file: it goes back
		// to a block, and the large one to the garbage collector, whose
		// memory the next allocations take instead of fresh pages (a grep
		// on Go's src grew one to 2 MiB, 3.5 MiB of pages faulted in for
		// one file)
		s.buf = make([]byte, BlockMin)
	}
	if cap(s.arena)-len(s.arena) < grepArenaMin {
		s.arena = make([]byte, 0, grepArenaChunk)
	}
	s.out = s.arena[len(s.arena):len(s.arena)]
	s.lines, s.matches, s.lastOut, s.afterLeft, s.tail = 0, 0, 0, 0, s.tail[:0]
	s.ctx, s.err, s.work = ctx, nil, 0
	defer func() { s.ctx = nil }()
	carry, line, first := 0, 1, true
	for {
		if err := ctx.Err(); err != nil {
			return FileResult{}, fmt.Errorf("search stopped at line %d: %w", line, err)
		}
		n, err := io.ReadFull(r, s.buf[carry:])
		eof := err == io.EOF || err == io.ErrUnexpectedEOF
		if err != nil && !eof {
			return FileResult{}, err
		}
		data := s.buf[:carry+n]
		if first {
			first = false
			if bytes.IndexByte(data[:min(len(data), grepBinaryWin)], 0) >= 0 {
				return FileResult{}, nil
			}
		}
		cut := len(data)
		if !eof {
			cut = bytes.LastIndexByte(data, '\n') + 1
			if cut == 0 { // one line fills the buffer
				if len(s.buf) < s.blockMax() {
					// twice the size, with no zeroed half to append
					// (garbage as large as the buffer): a walk's
					// garbage is what makes the garbage collector
					// run
					grown := make([]byte, 2*len(s.buf))
					carry = copy(grown, data)
					s.buf = grown
					continue
				}
				// longer than the largest block: read it through once
				rest, more, full, err := s.longLine(ctx, r, line)
				if err != nil {
					return FileResult{}, err
				}
				if full || !more {
					break
				}
				line++
				carry = rest
				continue
			}
		}
		block := data[:cut]
		full := s.scan(block, line, !eof)
		if s.err != nil {
			return FileResult{}, fmt.Errorf("search stopped in lines %d to %d: %w", line, line+bytes.Count(block[:len(block)-1], []byte{'\n'}), s.err)
		}
		if full {
			break
		}
		if eof {
			break
		}
		line += bytes.Count(block, []byte{'\n'})
		carry = copy(s.buf, data[cut:])
	}
	return FileResult{text: s.keep(), lines: s.lines, matches: s.matches}, nil
}

// keep returns the file's lines (s.out) as a string without copying them:
// they stay where they were written, in the arena's spare capacity (or in
// the buffer append moved them to, which becomes the arena), and the next
// file's lines are written after them, so nothing writes these bytes again.
// The answer is fresh memory whichever way, and a copy per file would
// write it twice.
func (s *Searcher) keep() string {
	if len(s.out) == 0 {
		return ""
	}
	text := unsafe.String(&s.out[0], len(s.out))
	if len(s.arena) < cap(s.arena) && &s.arena[:len(s.arena)+1][len(s.arena)] == &s.out[0] {
		s.arena = s.arena[:len(s.arena)+len(s.out)]
	} else { // out outgrew the arena: what is left of its buffer is the next arena
		s.arena = s.out
	}
	return text
}

// Matches returns the number of matching lines found in the file, one
// more than the searcher's limit when there are more.
func (r FileResult) Matches() int { return r.matches }

// The arena of a searcher (see keep): the files' lines are written in
// chunks of grepArenaChunk bytes, a new one when the last one has less
// than grepArenaMin bytes left (a file whose lines do not fit moves them
// to a buffer of their own, by append). A file's text keeps its chunk
// alive: [Collector.Add] copies the files it keeps once it has reached its
// limit, so that the memory it holds stays bounded.
const (
	grepArenaChunk = 64 << 10
	grepArenaMin   = 4 << 10
)

// grepHeadMax is how much of a line is kept to show it: enough for cutLine
// to cut it as it would cut the whole line.
const grepHeadMax = 4*grepLineMax + 8

// longLine searches line number n, which starts at s.buf[0] and is longer
// than the buffer, by streaming it through the line regular expression:
// the line is matched whole, with the buffer's memory. It leaves the bytes
// after the line's '\n' at the start of s.buf and returns their count;
// more is false when the file ended with the line, full true when the
// limit is reached.
func (s *Searcher) longLine(ctx context.Context, r io.Reader, n int) (rest int, more, full bool, err error) {
	lr := &grepLineReader{ctx: ctx, r: r, buf: s.buf, end: len(s.buf), head: s.head[:0], every: s.q.checkEvery()}
	lr.left = lr.every
	var match bool
	if s.q.pureLit != nil && len(s.q.pureLit) <= len(s.buf)/2 {
		match = lr.contains(s.q.pureLit)
	} else {
		match = s.q.re.MatchReader(lr)
	}
	lr.finish()
	s.head = lr.head
	if lr.err != nil {
		return 0, false, false, fmt.Errorf("search stopped at line %d: %w", n, lr.err)
	}
	if s.wholeLine(n, lr.head, match) {
		return 0, false, true, nil
	}
	if !lr.nl {
		return 0, false, false, nil
	}
	return copy(s.buf, s.buf[lr.pos+1:lr.end]), true, false, nil
}

// wholeLine puts out line n, found to match or not as a whole (its text
// is its head), with its context, as scan does for the lines of a block.
// It reports whether the limit is reached.
func (s *Searcher) wholeLine(n int, text []byte, match bool) (full bool) {
	C := s.q.context
	switch {
	case match:
		if C > 0 {
			s.before(nil, 0, n, C)
		}
		s.line(n, text, true)
		s.matches++
		if s.matches > s.limit {
			return true
		}
		s.afterLeft = C
	case s.afterLeft > 0:
		s.line(n, text, false)
		s.afterLeft--
	}
	if C > 0 { // the newest line of the before-context of what follows
		next := append(s.spare[:0], grepLine{n: n, text: cutLine(text)})
		next = append(next, s.tail[:min(len(s.tail), C-1)]...)
		s.tail, s.spare = next, s.tail
	}
	return false
}

// grepLineReader reads one line, from buf[pos:end] then from r through buf,
// as runes up to its '\n' (not included), keeping its first grepHeadMax
// bytes in head. It stops at the context's end or a read error (err).
type grepLineReader struct {
	ctx      context.Context
	r        io.Reader
	buf      []byte
	pos, end int
	every    int // bytes read between checks of ctx (Query.checkEvery)
	left     int // bytes left before the next check
	head     []byte
	eof      bool // r is exhausted
	done     bool // the line is over: at its '\n' (nl) or at the end of r
	nl       bool // buf[pos] is the line's '\n'
	err      error
}

// ReadRune implements [io.RuneReader]; the line's end is [io.EOF].
func (lr *grepLineReader) ReadRune() (rune, int, error) {
	if lr.left--; lr.left < 0 {
		lr.left = lr.every
		if lr.err = lr.ctx.Err(); lr.err != nil {
			lr.done = true
		}
	}
	for !lr.done {
		if lr.pos < lr.end {
			c := lr.buf[lr.pos]
			switch {
			case c == '\n':
				lr.done, lr.nl = true, true
				return 0, 0, io.EOF
			case c < utf8.RuneSelf:
				lr.pos++
				return rune(c), 1, nil
			case lr.eof || utf8.FullRune(lr.buf[lr.pos:lr.end]):
				r, size := utf8.DecodeRune(lr.buf[lr.pos:lr.end])
				lr.pos += size
				return r, size, nil
			}
		} else if lr.eof {
			lr.done = true
			break
		}
		lr.fill()
	}
	return 0, 0, io.EOF
}

// fill keeps the head, moves an incomplete rune at the end of the buffer
// to its start and reads more after it.
func (lr *grepLineReader) fill() {
	lr.keepHead()
	if lr.err = lr.ctx.Err(); lr.err != nil {
		lr.done = true
		return
	}
	k := copy(lr.buf, lr.buf[lr.pos:lr.end])
	n, err := io.ReadFull(lr.r, lr.buf[k:])
	lr.pos, lr.end = 0, k+n
	switch {
	case err == io.EOF || err == io.ErrUnexpectedEOF:
		lr.eof = true
	case err != nil:
		lr.err, lr.done = err, true
	}
}

func (lr *grepLineReader) keepHead() {
	if k := grepHeadMax - len(lr.head); k > 0 {
		lr.head = append(lr.head, lr.buf[:min(lr.pos, k)]...)
	}
}

// contains reports whether the rest of the line holds lit, a literal
// shorter than half the buffer: bytes.Index on each buffer, which keeps
// the last len(lit)-1 bytes of the previous one.
func (lr *grepLineReader) contains(lit []byte) bool {
	for !lr.done {
		seg := lr.buf[lr.pos:lr.end]
		nl := bytes.IndexByte(seg, '\n')
		if nl >= 0 {
			seg = seg[:nl]
		}
		if bytes.Contains(seg, lit) {
			return true
		}
		switch {
		case nl >= 0:
			lr.pos += nl
			lr.done, lr.nl = true, true
		case lr.eof:
			lr.pos, lr.done = lr.end, true
		default:
			lr.pos = max(lr.pos, lr.end-len(lit)+1)
			lr.fill()
		}
	}
	return false
}

// finish skips the rest of the line, once the match is decided.
func (lr *grepLineReader) finish() {
	for !lr.done {
		if i := bytes.IndexByte(lr.buf[lr.pos:lr.end], '\n'); i >= 0 {
			lr.pos += i
			lr.done, lr.nl = true, true
			break
		}
		lr.pos = lr.end
		if lr.eof {
			lr.done = true
			break
		}
		lr.fill()
	}
	lr.keepHead()
}

// blockMax is the largest buffer: at least a rune, for longLine.
func (s *Searcher) blockMax() int {
	if s.maxBlock > 0 {
		return max(s.maxBlock, utf8.UTFMax)
	}
	return BlockMax
}

// scan finds the matching lines of block, whose first line is number line,
// and puts them out with their context. It reports whether the limit is
// reached.
func (s *Searcher) scan(block []byte, line int, more bool) (full bool) {
	C := s.q.context
	pos := 0 // block offset of the start of line number `line`
	if s.q.pre != nil {
		s.cur.reset(s.q.pre, block)
	}
	if C > 0 && s.afterLeft > 0 {
		// context lines owed from the previous block come first; a match
		// among them is put out by the loop below
		p, n := 0, line
		for s.afterLeft > 0 && p < len(block) {
			ls, le := p, lineEnd(block, p)
			if s.lineMatches(block[ls:le]) {
				break
			}
			s.line(n, block[ls:le], false)
			s.afterLeft--
			p, n = le+1, n+1
		}
	}
	for from := 0; from < len(block); {
		ls, le, ok := s.next(block, from)
		if !ok {
			break
		}
		n := line + bytes.Count(block[pos:ls], []byte{'\n'})
		pos, line = ls, n
		if C > 0 {
			s.before(block, ls, n, C)
		}
		s.line(n, block[ls:le], true)
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
				if s.lineMatches(block[p:ae]) {
					break
				}
				s.line(m, block[p:ae], false)
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
func (s *Searcher) before(block []byte, ls, n, C int) {
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
				if s.start(t.n, false) {
					s.out = append(append(s.out, t.text...), '\n')
				}
			}
		}
	}
	for i := len(starts) - 1; i >= 0; i-- {
		st := starts[i]
		s.line(n-i-1, block[st:lineEnd(block, st)], false)
	}
}

// line puts out line n, whose text is text (without its '\n'), as a match
// or a context line, unless it is out already.
func (s *Searcher) line(n int, text []byte, match bool) {
	if n <= s.lastOut {
		return
	}
	if !s.start(n, match) {
		return
	}
	if b := bytes.TrimSuffix(text, []byte{'\r'}); len(b) <= grepLineMax && validText(b) {
		s.out = append(s.out, b...)
	} else {
		s.out = append(s.out, cutLine(text)...)
	}
	s.out = append(s.out, '\n')
}

// start writes what comes before the text of line n: "--" on a line of
// its own when context is shown and the line does not follow the last
// one, then ":N: " for a match or "-N- " for a context line. Past
// maxText bytes nothing more is written, as the answer cannot show it, and
// start reports false.
func (s *Searcher) start(n int, match bool) bool {
	last := s.lastOut
	s.lastOut = n
	if s.maxText > 0 && len(s.out) > s.maxText {
		return false
	}
	if cap(s.out)-len(s.out) < grepLineRoom {
		s.grow()
	}
	if s.q.context > 0 && last > 0 && n > last+1 {
		s.out = append(s.out, "--\n"...)
	}
	mark := byte('-')
	if match {
		mark = ':'
	}
	s.lines++
	// the mark, n and the mark again, written backwards into one array
	// and appended at once: strconv.AppendInt and three appends cost a
	// line some 13 ns more, a tenth of a match's work
	var d [24]byte
	i := len(d) - 2
	d[i], d[i+1] = mark, ' '
	for ; n >= 10; n /= 10 {
		i--
		d[i] = byte('0' + n%10)
	}
	d[i-1], d[i-2] = byte('0'+n), mark
	s.out = append(s.out, d[i-2:]...)
	return true
}

// grepLineRoom is more than one line of the answer takes, "--" and its
// prefix included: [Searcher.start] makes room for it, so that no append
// of the line's bytes grows s.out.
const grepLineRoom = grepHeadMax + 64

// grow moves the file's lines written so far (s.out) to a buffer of twice
// their size, or a chunk of the arena's size: append would grow it by a
// quarter at a time once it is large, copying a file of many matches
// several times over and leaving as much garbage.
func (s *Searcher) grow() {
	b := make([]byte, len(s.out), max(grepArenaChunk, 2*len(s.out)+grepLineRoom))
	copy(b, s.out)
	s.out = b
}

// next finds the first matching line at or after offset from (the start
// of a line), as the offsets of its start and of its end (its '\n', or
// len(block)). With a prefilter, the regular expression runs only on the
// lines it finds, each once. Without one, it runs over the block window by
// window: it never crosses a line break, so each byte is searched once and
// a match lies in the line it is found in.
func (s *Searcher) next(block []byte, from int) (ls, le int, ok bool) {
	q := s.q
	for from < len(block) {
		if q.pre != nil {
			at, sure := s.cur.next(from)
			if at < 0 {
				return 0, 0, false
			}
			ls = lineStart(block, at)
			le = lineEnd(block, at)
			if !sure {
				var ok bool
				if ok, sure = s.cur.holdsAlso(ls, le); !ok {
					from = le + 1
					continue
				}
			}
			switch {
			case sure:
				return ls, le, true
			case q.span > 0 && le-ls > q.longLine:
				if s.windowMatch(block, ls, le, at) {
					return ls, le, true
				}
			case s.match(block[ls:le]):
				return ls, le, true
			}
			if s.err != nil {
				return 0, 0, false
			}
			from = le + 1
			continue
		}
		end := len(block)
		if from+q.window < end {
			end = lineEnd(block, from+q.window)
		}
		loc := s.findIndex(block[from:end])
		if loc == nil {
			if s.err != nil {
				return 0, 0, false
			}
			from = end + 1
			continue
		}
		at := from + loc[0]
		if at == len(block) && block[at-1] == '\n' {
			return 0, 0, false // an empty match after the last line's '\n' is no line
		}
		ls = bytes.LastIndexByte(block[:at], '\n') + 1
		return ls, lineEnd(block, at), true
	}
	return 0, 0, false
}

// lineMatches reports whether one line (without its '\n') matches.
func (s *Searcher) lineMatches(line []byte) bool {
	if s.q.pureLit != nil {
		return bytes.Contains(line, s.q.pureLit)
	}
	return s.match(line)
}

// lineStart returns the offset of the start of the line holding offset
// at: after the last '\n' of block[:at], or 0. It reads eight bytes at a
// time: bytes.LastIndexByte goes byte by byte, and most hits are tens of
// bytes into their line.
func lineStart(block []byte, at int) int {
	const low7 = 0x7f7f7f7f7f7f7f7f
	const breaks = 0x0a0a0a0a0a0a0a0a
	i := at
	for ; i >= 8; i -= 8 {
		w := binary.LittleEndian.Uint64(block[i-8:]) ^ breaks
		// the high bit of each byte of w that is zero, exactly (no borrow
		// from one byte into the next)
		if z := ^(((w & low7) + low7) | w | low7); z != 0 {
			return i - bits.LeadingZeros64(z)/8
		}
	}
	return bytes.LastIndexByte(block[:i], '\n') + 1
}

func lineEnd(block []byte, p int) int {
	if i := bytes.IndexByte(block[p:], '\n'); i >= 0 {
		return p + i
	}
	return len(block)
}

// validText is utf8.Valid with a faster answer for ASCII, almost every
// line of source text: the bytes ORed eight at a time (the last eight
// overlapping), then the full check only if one of them is not ASCII.
func validText(b []byte) bool {
	const high = 0x8080808080808080
	if len(b) < 8 {
		for _, c := range b {
			if c >= utf8.RuneSelf {
				return utf8.Valid(b)
			}
		}
		return true
	}
	acc := binary.LittleEndian.Uint64(b[len(b)-8:])
	for i := 0; i+8 <= len(b); i += 8 {
		acc |= binary.LittleEndian.Uint64(b[i:])
	}
	return acc&high == 0 || utf8.Valid(b)
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
