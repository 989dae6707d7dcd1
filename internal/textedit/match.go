package textedit

import (
	"errors"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

const utf8BOM = "\ufeff"

var (
	// ErrEmptyOldText: oldText is empty.
	ErrEmptyOldText = errors.New("oldText is empty")
	// ErrNoMatch: oldText is found in neither space.
	ErrNoMatch = errors.New("no match")
	// ErrNoChange: the replacement leaves the file as it was.
	ErrNoChange = errors.New("no change")
)

// AmbiguousError: oldText matches several regions.
type AmbiguousError struct{ N int }

// Error returns "ambiguous match"; the tools say how many matches.
func (e *AmbiguousError) Error() string { return "ambiguous match" }

// editText is a file's content prepared for matching.
type editText struct {
	raw  string // the whole file
	bom  bool   // raw starts with a UTF-8 BOM
	body string // raw without the BOM
	crlf bool   // the first line ending is "\r\n": new text is written so
	lf   string // body with every "\r\n" as "\n" (the exact space)
	crs  []int  // offsets in lf of each "\n" that was "\r\n" in body
}

func newEditText(raw string) *editText {
	t := &editText{raw: raw, body: raw}
	if strings.HasPrefix(raw, utf8BOM) {
		t.bom, t.body = true, raw[len(utf8BOM):]
	}
	if i := strings.IndexByte(t.body, '\n'); i > 0 && t.body[i-1] == '\r' {
		t.crlf = true
	}
	if !strings.Contains(t.body, "\r\n") {
		t.lf = t.body
		return t
	}
	var b strings.Builder
	b.Grow(len(t.body))
	for i := 0; i < len(t.body); i++ {
		if t.body[i] == '\r' && i+1 < len(t.body) && t.body[i+1] == '\n' {
			t.crs = append(t.crs, b.Len())
			continue
		}
		b.WriteByte(t.body[i])
	}
	t.lf = b.String()
	return t
}

// bodyOffset maps an offset of lf to the offset of body: each "\r" dropped
// before it counts. An offset just before a "\n" that was "\r\n" maps to
// just before the "\r".
func (t *editText) bodyOffset(p int) int {
	return p + sort.SearchInts(t.crs, p)
}

// styled returns s with the file's line endings.
func (t *editText) styled(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if t.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// Match is where oldText was found.
type Match struct {
	start, end int  // the region of raw that is replaced
	Tolerant   bool // found in the tolerant space only
}

// findEdit finds the one region of t that oldText designates: an exact
// match if there is one (several exact matches are ambiguous), else a
// tolerant one, unique among tolerant matches.
func (t *editText) find(oldText string) (Match, error) {
	if oldText == "" {
		return Match{}, ErrEmptyOldText
	}
	old := strings.ReplaceAll(oldText, "\r\n", "\n")
	onChars := func(s, e int) bool { return charBoundary(t.lf, s) && charBoundary(t.lf, e) }
	pos, n := findUnique(t.lf, old, onChars)
	if n > 1 {
		return Match{}, &AmbiguousError{n}
	}
	off := len(utf8BOM)
	if !t.bom {
		off = 0
	}
	if n == 1 {
		return Match{start: off + t.bodyOffset(pos), end: off + t.bodyOffset(pos+len(old))}, nil
	}
	if isTolerantForm(old) && isTolerantForm(t.lf) {
		// Both are their own tolerant forms: the exact search was the
		// tolerant one.
		return Match{}, ErrNoMatch
	}
	tOld, _ := tolerantForm(old, false)
	if tOld == "" {
		return Match{}, ErrNoMatch
	}
	tText, origin := tolerantForm(t.lf, true)
	aligned := func(s, e int) bool {
		if s > 0 && (origin.at(s-1) == origin.at(s) || !charBoundary(t.lf, origin.at(s))) {
			return false
		}
		if e < origin.len() {
			last := origin.at(e - 1)
			return last != origin.at(e) && charBoundary(t.lf, last+segmentLen(t.lf, last))
		}
		return true
	}
	pos, n = findUnique(tText, tOld, aligned)
	switch {
	case n > 1:
		return Match{}, &AmbiguousError{n}
	case n == 0:
		return Match{}, ErrNoMatch
	}
	ls := origin.at(pos)
	last := origin.at(pos + len(tOld) - 1)
	le := last + segmentLen(t.lf, last)
	return Match{start: off + t.bodyOffset(ls), end: off + t.bodyOffset(le), Tolerant: true}, nil
}

// apply replaces the region of m with newText in the file's line endings.
func (t *editText) apply(m Match, newText string) string {
	return t.raw[:m.start] + t.styled(newText) + t.raw[m.end:]
}

// Apply finds oldText in content and replaces it with newText. It
// fails with ErrEmptyOldText, ErrNoMatch, *AmbiguousError or ErrNoChange.
func Apply(content, oldText, newText string) (string, Match, error) {
	t := newEditText(content)
	m, err := t.find(oldText)
	if err != nil {
		return "", m, err
	}
	if t.styled(newText) == content[m.start:m.end] {
		return "", m, ErrNoChange
	}
	return t.apply(m, newText), m, nil
}

// Styled returns s written in content's line endings (CRLF when content's
// first line ends in "\r\n"), as Apply writes newText.
func Styled(content, s string) string { return newEditText(content).styled(s) }

// findUnique returns the position of the first occurrence of needle in
// hay accepted by ok (nil accepts all), and how many there are: counted
// without overlap, except that an occurrence overlapping the first one
// makes the count at least 2, since it makes the choice ambiguous too.
func findUnique(hay, needle string, ok func(s, e int) bool) (first, count int) {
	first = -1
	for from := 0; from <= len(hay)-len(needle); {
		j := strings.Index(hay[from:], needle)
		if j < 0 {
			break
		}
		p := from + j
		if ok == nil || ok(p, p+len(needle)) {
			if count == 0 {
				first = p
			}
			count++
			from = p + len(needle)
		} else {
			from = p + 1
		}
	}
	if count == 1 {
		for from := first + 1; from < first+len(needle) && from <= len(hay)-len(needle); {
			j := strings.Index(hay[from:], needle)
			if j < 0 || from+j >= first+len(needle) {
				break
			}
			p := from + j
			if ok == nil || ok(p, p+len(needle)) {
				return first, 2
			}
			from = p + 1
		}
	}
	return first, count
}

// runeBoundary reports whether offset i of s is not inside a valid UTF-8
// sequence, so that a match may start or end there.
func runeBoundary(s string, i int) bool {
	if i <= 0 || i >= len(s) || utf8.RuneStart(s[i]) {
		return true
	}
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if utf8.RuneStart(s[j]) {
			r, size := utf8.DecodeRuneInString(s[j:])
			return (r == utf8.RuneError && size == 1) || j+size <= i
		}
	}
	return true
}

// charBoundary reports whether an exact match may start or end at offset
// i of s: on a rune boundary that does not split a character, so neither
// a combining mark (or another mark) nor a zero-width joiner follows it,
// and no joiner precedes it. "cafe" in "cafe\u0301" ends inside "é":
// replacing it would leave the mark on whatever comes in its place.
func charBoundary(s string, i int) bool {
	if !runeBoundary(s, i) {
		return false
	}
	if i <= 0 || i >= len(s) {
		return true
	}
	if r, _ := utf8.DecodeRuneInString(s[i:]); r == zeroWidthJoiner || unicode.Is(unicode.M, r) {
		return false
	}
	r, _ := utf8.DecodeLastRuneInString(s[:i])
	return r != zeroWidthJoiner
}

// zeroWidthJoiner joins the runes on either side into one character
// (emoji sequences, some scripts).
const zeroWidthJoiner = '\u200d'

// segmentLen is the length of the normalisation segment of s starting at
// i: one byte for ASCII followed by ASCII (the common case), else up to
// the next NFKC boundary.
func segmentLen(s string, i int) int {
	if s[i] < utf8.RuneSelf && (i+1 == len(s) || s[i+1] < utf8.RuneSelf) {
		return 1
	}
	n := norm.NFKC.NextBoundaryInString(s[i:], true)
	if n <= 0 {
		_, n = utf8.DecodeRuneInString(s[i:])
	}
	return n
}

// tolerantForm returns s in the tolerant space and, when withOrigin, for
// each byte of it the offset in s of the segment it comes from. It builds
// the form once, without a final copy: the whitespace at the end of a line
// is held back until something other than a line break follows it.
func tolerantForm(s string, withOrigin bool) (string, *originMap) {
	var out strings.Builder
	out.Grow(len(s))
	var origin *originMap
	if withOrigin {
		origin = newOriginMap(len(s))
	}
	var (
		ws    []byte      // whitespace held back
		wsAt  []originRun // where it comes from
		wsRun = func(from int) {
			if n := len(wsAt); n > 0 && int(wsAt[n-1].from+wsAt[n-1].n) == from {
				wsAt[n-1].n++
				return
			}
			wsAt = append(wsAt, originRun{from: int32(from), n: 1})
		}
	)
	emit := func(b byte, from int) {
		switch b {
		case '\n':
			ws, wsAt = ws[:0], wsAt[:0]
		case ' ', '\t', '\r', '\f', '\v': // isBlank
			ws = append(ws, b)
			if withOrigin {
				wsRun(from)
			}
			return
		default:
			if len(ws) > 0 {
				out.Write(ws)
				if withOrigin {
					for _, r := range wsAt {
						origin.pushRun(int(r.from), int(r.n))
					}
				}
				ws, wsAt = ws[:0], wsAt[:0]
			}
		}
		out.WriteByte(b)
		if withOrigin {
			origin.push(from)
		}
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
		if len(ws) == 0 {
			// Fast path: a run of ASCII without whitespace held back
			// (whitespace only before visible ASCII), each byte its own
			// segment (the last one only if ASCII follows it).
			j := i
			for j < len(s) && s[j] < utf8.RuneSelf {
				if isBlank(s[j]) && (j+1 == len(s) || s[j+1] <= ' ' || s[j+1] >= utf8.RuneSelf) {
					break
				}
				j++
			}
			if j < len(s) && s[j] >= utf8.RuneSelf {
				j--
			}
			if j > i {
				out.WriteString(s[i:j])
				if withOrigin {
					origin.pushRun(i, j-i)
				}
				i = j
				continue
			}
		}
		n := segmentLen(s, i)
		if n == 1 && s[i] < utf8.RuneSelf {
			emit(s[i], i)
			i++
			continue
		}
		seg := s[i : i+n]
		if !utf8.ValidString(seg) {
			// Invalid bytes are kept as they are, one rune at a time.
			for j := 0; j < len(seg); {
				r, size := utf8.DecodeRuneInString(seg[j:])
				if r == utf8.RuneError && size == 1 {
					emit(seg[j], i)
				} else {
					k := utf8.EncodeRune(buf[:], foldRune(r))
					for _, b := range buf[:k] {
						emit(b, i)
					}
				}
				j += size
			}
			i += n
			continue
		}
		for _, r := range norm.NFKC.String(seg) {
			k := utf8.EncodeRune(buf[:], foldRune(r))
			for _, b := range buf[:k] {
				emit(b, i)
			}
		}
		i += n
	}
	return out.String(), origin
}

// originRun is a run of n bytes whose origins follow from from.
type originRun struct{ from, n int32 }

// originMap maps each byte of a tolerant form to the offset, in the text
// it comes from, of the segment it comes from. It takes about one byte a
// byte of the form (a []int32 took four): the origin of the first byte of
// each block of originBlock bytes, and for each byte its distance from
// it, or originFar when the origin is kept aside in far.
type originMap struct {
	base []int32
	off  []uint8
	far  []farOrigin
}

// farOrigin is the origin of a byte too far from its block's base.
type farOrigin struct{ i, origin int32 }

const (
	originBlock = 64
	originFar   = 255
)

func newOriginMap(capacity int) *originMap {
	return &originMap{base: make([]int32, 0, capacity/originBlock+1), off: make([]uint8, 0, capacity)}
}

// len is the number of bytes mapped.
func (m *originMap) len() int { return len(m.off) }

// push maps the next byte to origin, which is not less than the last one.
func (m *originMap) push(origin int) {
	i := len(m.off)
	if i%originBlock == 0 {
		m.base = append(m.base, int32(origin))
	}
	d := origin - int(m.base[i/originBlock])
	if d >= originFar {
		m.far = append(m.far, farOrigin{int32(i), int32(origin)})
		d = originFar
	}
	m.off = append(m.off, uint8(d))
}

// pushRun maps the next n bytes to from, from+1, … (from not less than
// the last origin).
func (m *originMap) pushRun(from, n int) {
	for k := 0; k < n; {
		i := len(m.off)
		if i%originBlock == 0 {
			m.base = append(m.base, int32(from+k))
		}
		base := int(m.base[i/originBlock])
		end := k + min(n-k, originBlock-i%originBlock)
		for ; k < end; k++ {
			d := from + k - base
			if d >= originFar {
				m.far = append(m.far, farOrigin{int32(len(m.off)), int32(from + k)})
				d = originFar
			}
			m.off = append(m.off, uint8(d))
		}
	}
}

// at is the origin of byte i.
func (m *originMap) at(i int) int {
	if d := m.off[i]; d < originFar {
		return int(m.base[i/originBlock]) + int(d)
	}
	k := sort.Search(len(m.far), func(k int) bool { return int(m.far[k].i) >= i })
	return int(m.far[k].origin)
}

// isBlank reports whether c is whitespace that the tolerant space drops
// at the end of a line.
func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' }

// isTolerantForm reports, without allocating, whether s is ASCII without
// whitespace at the end of a line: its own tolerant form.
func isTolerantForm(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= utf8.RuneSelf:
			return false
		case isBlank(c):
			if i+1 == len(s) || s[i+1] == '\n' {
				return false
			}
		}
	}
	return true
}

// foldRune maps typographic quotes to ASCII quotes, Unicode dashes to "-"
// and special spaces to " ".
func foldRune(r rune) rune {
	switch r {
	case '\u2018', '\u2019', '\u201A', '\u201B', '\u2032', '\u2035':
		return '\''
	case '\u201C', '\u201D', '\u201E', '\u201F', '\u2033', '\u2036':
		return '"'
	case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212',
		'\uFE58', '\uFE63', '\uFF0D':
		return '-'
	case '\u00A0', '\u1680', '\u202F', '\u205F', '\u3000':
		return ' '
	}
	if r >= '\u2000' && r <= '\u200A' {
		return ' '
	}
	return r
}
