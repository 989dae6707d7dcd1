package codetools

import (
	"errors"
	"sort"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// The edit matching engine. A file's text is matched in two spaces:
//
//   - the exact space: the file without its UTF-8 BOM and with "\r\n" as
//     "\n" (the model writes LF);
//   - the tolerant space, tried only when the exact one has no match: the
//     exact text under Unicode NFKC, with typographic quotes as ASCII quotes,
//     Unicode dashes as "-", special spaces as " ", and the whitespace at the
//     end of each line dropped.
//
// Each space keeps a map back to byte offsets of the file, so that only the
// matched region is replaced and every other byte stays as it was.

const utf8BOM = "\ufeff"

var (
	// errEmptyOldText: oldText is empty.
	errEmptyOldText = errors.New("oldText is empty")
	// errNoMatch: oldText is found in neither space.
	errNoMatch = errors.New("no match")
	// errNoChange: the replacement leaves the file as it was.
	errNoChange = errors.New("no change")
)

// ambiguousError: oldText matches several regions.
type ambiguousError struct{ n int }

func (e *ambiguousError) Error() string { return "ambiguous match" }

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

// editMatch is where oldText was found.
type editMatch struct {
	start, end int  // the region of raw that is replaced
	tolerant   bool // found in the tolerant space only
}

// findEdit finds the one region of t that oldText designates: an exact
// match if there is one (several exact matches are ambiguous), else a
// tolerant one, unique among tolerant matches.
func (t *editText) find(oldText string) (editMatch, error) {
	if oldText == "" {
		return editMatch{}, errEmptyOldText
	}
	old := strings.ReplaceAll(oldText, "\r\n", "\n")
	onRunes := func(s, e int) bool { return runeBoundary(t.lf, s) && runeBoundary(t.lf, e) }
	pos, n := findUnique(t.lf, old, onRunes)
	if n > 1 {
		return editMatch{}, &ambiguousError{n}
	}
	off := len(utf8BOM)
	if !t.bom {
		off = 0
	}
	if n == 1 {
		return editMatch{start: off + t.bodyOffset(pos), end: off + t.bodyOffset(pos+len(old))}, nil
	}
	tOld, _ := tolerantForm(old, false)
	if tOld == "" {
		return editMatch{}, errNoMatch
	}
	tText, origin := tolerantForm(t.lf, true)
	aligned := func(s, e int) bool {
		return (s == 0 || origin[s-1] != origin[s]) && (e == len(origin) || origin[e-1] != origin[e])
	}
	pos, n = findUnique(tText, tOld, aligned)
	switch {
	case n > 1:
		return editMatch{}, &ambiguousError{n}
	case n == 0:
		return editMatch{}, errNoMatch
	}
	ls := int(origin[pos])
	last := int(origin[pos+len(tOld)-1])
	le := last + segmentLen(t.lf, last)
	return editMatch{start: off + t.bodyOffset(ls), end: off + t.bodyOffset(le), tolerant: true}, nil
}

// apply replaces the region of m with newText in the file's line endings.
func (t *editText) apply(m editMatch, newText string) string {
	return t.raw[:m.start] + t.styled(newText) + t.raw[m.end:]
}

// applyEdit finds oldText in content and replaces it with newText. It
// fails with errEmptyOldText, errNoMatch, *ambiguousError or errNoChange.
func applyEdit(content, oldText, newText string) (string, editMatch, error) {
	t := newEditText(content)
	m, err := t.find(oldText)
	if err != nil {
		return "", m, err
	}
	out := t.apply(m, newText)
	if out == content {
		return "", m, errNoChange
	}
	return out, m, nil
}

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
// each byte of it the offset in s of the segment it comes from.
func tolerantForm(s string, withOrigin bool) (string, []int32) {
	out := make([]byte, 0, len(s))
	var origin []int32
	if withOrigin {
		origin = make([]int32, 0, len(s))
	}
	wsStart := -1 // start of the run of whitespace that ends out, or -1
	emit := func(b byte, from int) {
		switch {
		case b == '\n':
			if wsStart >= 0 {
				out = out[:wsStart]
				if withOrigin {
					origin = origin[:wsStart]
				}
			}
			wsStart = -1
		case b == ' ' || b == '\t' || b == '\r' || b == '\f' || b == '\v':
			if wsStart < 0 {
				wsStart = len(out)
			}
		default:
			wsStart = -1
		}
		out = append(out, b)
		if withOrigin {
			origin = append(origin, int32(from))
		}
	}
	var buf [utf8.UTFMax]byte
	for i := 0; i < len(s); {
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
	if wsStart >= 0 {
		out = out[:wsStart]
		if withOrigin {
			origin = origin[:wsStart]
		}
	}
	return string(out), origin
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
