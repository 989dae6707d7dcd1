package search

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"regexp/syntax"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// A prefilter finds the lines that may match before the regular expression
// runs on them: either needles (literal.go), one of which every
// matching line holds, or, for a pattern without a literal such as [α-ω]+,
// the set of bytes a match can start with (its first bytes, from the parse
// tree), when that set is rare in text: a few bytes, or only bytes outside
// ASCII (UTF-8 lead bytes), where ASCII text is skipped 16 bytes at a
// time.

// grepNeedle is a string a candidate line holds.
type grepNeedle struct {
	lit    []byte // the bytes looked for
	folded bool   // lit is lowered: its ASCII letters match in either case
	sure   bool   // a line holding it matches, without the regular expression
	extra  bool   // a rare variant of another needle (K, ſ)
	// when set, a hit counts only if the byte before it is in before and
	// the one after it in after: the needle is a literal of the pattern's
	// concatenation, and these are the bytes its neighbours can end and
	// start with
	before, after *[256]bool
	probe         grepProbe // finds where lit may start (see settle)
}

// grepPrefilter finds candidate lines.
type grepPrefilter struct {
	needles []grepNeedle // a match holds one of them; or else
	also    []grepNeedle // a match holds every one of them too (other parts of a concatenation)
	prefix  []byte       // a match starts its line with prefix...
	anchor  bool         // ...and a line that does matches: the pattern is ^prefix
	set     *[256]bool   // a match starts with one of these bytes
	high    bool         // every byte of set is outside ASCII
	sure    bool         // a line holding a byte of set matches
	simd    bool         // probes may use SIMD (tests turn it off to check the other path)
}

// grepCommonBytes are the bytes found in most lines of source text: a
// prefilter on them would pass almost every line.
const grepCommonBytes = " \t\n0123456789abcdefilmnoprstux.,/():;=\"{}_"

// newGrepPrefilter returns the prefilter for re (line-only, see lineOnly),
// or nil when it knows none better than running re over the block.
func newGrepPrefilter(re *syntax.Regexp) *grepPrefilter {
	if needles := litNeedles(requiredLits(re)); needles != nil {
		_, shortest := needleStats(needles)
		if whole, isLit := literalOnly(re); isLit && len(needles[0].lit) == len(string(whole.runes)) {
			needles[0].sure = true // the pattern is this literal, not a part of it
		}
		if needles[0].sure || shortest >= 2 || (shortest == 1 && rareBytes(needles)) {
			p := &grepPrefilter{needles: needles}
			p.also = alsoNeedles(re, needles)
			p.prefix, p.anchor = anchoredPrefix(re)
			neighbourBytes(re, needles)
			sureAlternation(re, needles)
			return p
		}
	}
	set, nullable := firstBytes(re)
	if nullable {
		return nil // an empty match can be anywhere
	}
	p := &grepPrefilter{set: &set, high: true}
	var few []byte
	common := false
	for b := range 256 {
		if set[b] {
			few = append(few, byte(b))
			p.high = p.high && b >= utf8.RuneSelf
			common = common || strings.IndexByte(grepCommonBytes, byte(b)) >= 0
		}
	}
	p.sure = asciiClassOnly(re)
	switch {
	case len(few) <= 3 && !common:
		p.set = nil
		for _, b := range few {
			p.needles = append(p.needles, grepNeedle{lit: []byte{b}, sure: p.sure})
		}
		return p
	case p.high || p.sure:
		return p
	}
	return nil
}

// settle computes the probe of each needle, once the needles are final,
// and lets them use SIMD. A nil p has none.
func (p *grepPrefilter) settle() {
	if p == nil {
		return
	}
	p.simd = true
	for _, ns := range [][]grepNeedle{p.needles, p.also} {
		for k := range ns {
			ns[k].probe = newGrepProbe(ns[k].lit, ns[k].folded)
		}
	}
	for k := range p.needles {
		p.needles[k].probeAfter()
	}
}

// probeAfter gives a needle of one byte whose hits count only before a
// byte of its after set (the digits after the '-' of
// [0-9]{4}-[0-9]{2}-[0-9]{2}) a probe on that byte too: the bytes of the
// set share all bits but those of a mask m, so b|m == v holds for each of
// them and for at most 15 others, and the probe passes over the many
// hits that the set would refuse one by one. A hit at the end of the text
// has no byte after it: the probe cannot find it, so the set must refuse
// a line's end ('\n').
func (n *grepNeedle) probeAfter() {
	if len(n.lit) != 1 || n.after == nil || n.after['\n'] {
		return
	}
	first, m := -1, byte(0)
	for c, in := range n.after {
		switch {
		case !in:
		case first < 0:
			first = c
		default:
			m |= byte(c) ^ byte(first)
		}
	}
	if first < 0 || bits.OnesCount8(m) > 4 {
		return
	}
	n.probe.o2, n.probe.b2, n.probe.m2, n.probe.span = 1, byte(first)|m, m, 1
}

// indexIn returns the offset of the first occurrence of n in s (of its
// letters in either case when n is folded), or -1.
func (n *grepNeedle) indexIn(s []byte, simd bool) int {
	for from := 0; ; {
		i := n.probe.index(s[from:], simd)
		if i < 0 {
			return -1
		}
		h := from + i
		if n.at(s[h : h+len(n.lit)]) {
			return h
		}
		from = h + 1
	}
}

// at reports whether b (as long as lit) is an occurrence of n.
func (n *grepNeedle) at(b []byte) bool {
	if !n.folded {
		return bytes.Equal(b, n.lit)
	}
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != n.lit[i] {
			return false
		}
	}
	return true
}

// rareBytes reports whether the one-byte needles of a set are all
// outside grepCommonBytes.
func rareBytes(needles []grepNeedle) bool {
	for _, n := range needles {
		if len(n.lit) == 1 && strings.IndexByte(grepCommonBytes, n.lit[0]) >= 0 {
			return false
		}
	}
	return true
}

// alsoNeedles returns the needles of the other parts of a concatenation
// that a match holds besides the chosen ones: single needles of two bytes
// or more, without variants, so that a line lacking one cannot match.
func alsoNeedles(re *syntax.Regexp, chosen []grepNeedle) []grepNeedle {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return nil
	}
	var also []grepNeedle
	for _, sub := range re.Sub {
		ns := litNeedles(requiredLits(sub))
		if len(ns) != 1 || len(ns[0].lit) < 2 || (len(chosen) == 1 && bytes.Equal(ns[0].lit, chosen[0].lit)) {
			continue
		}
		also = append(also, ns[0])
	}
	return also
}

// neighbourBytes sets the before and after sets of a single needle that is
// a whole literal of the top concatenation of re, from the sub-expressions
// on each side of it that cannot match the empty string, or from a \b
// beside it. When the pattern is only the literal between \b assertions,
// a hit with allowed neighbours is a match: the needle is sure.
func neighbourBytes(re *syntax.Regexp, needles []grepNeedle) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat {
		return
	}
	if count, _ := needleStats(needles); count != 1 {
		return
	}
	n := &needles[0]
	for k, sub := range re.Sub {
		if sub.Op != syntax.OpLiteral {
			continue
		}
		ns := litNeedles(requiredLits(sub))
		if len(ns) == 0 || !bytes.Equal(ns[0].lit, n.lit) || ns[0].folded != n.folded || len(n.lit) != len(string(sub.Rune)) {
			continue
		}
		bounded := true // every other part is a \b
		for j, other := range re.Sub {
			bounded = bounded && (j == k || other.Op == syntax.OpWordBoundary)
		}
		if k > 0 {
			if re.Sub[k-1].Op == syntax.OpWordBoundary {
				n.before = boundaryBytes(n.lit[0])
			} else if set, nullable := lastBytes(re.Sub[k-1]); !nullable {
				n.before = &set
			}
		}
		if k+1 < len(re.Sub) {
			if re.Sub[k+1].Op == syntax.OpWordBoundary {
				n.after = boundaryBytes(n.lit[len(n.lit)-1])
			} else if set, nullable := firstBytes(re.Sub[k+1]); !nullable {
				n.after = &set
			}
		}
		n.sure = bounded && len(re.Sub) <= 3
		return
	}
}

// boundaryBytes returns the bytes that can stand beside b with a \b
// between them (Go's \b knows ASCII word characters only; a byte outside
// ASCII belongs to a rune that is not one), '\n' standing for the line's
// start or end.
func boundaryBytes(b byte) *[256]bool {
	var set [256]bool
	word := isWordByte(b)
	for c := range set {
		set[c] = isWordByte(byte(c)) != word
	}
	set['\n'] = word
	return &set
}

func isWordByte(c byte) bool {
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// sureAlternation marks sure the needles that are whole branches of an
// alternation of literals: a hit of one is a match.
func sureAlternation(re *syntax.Regexp, needles []grepNeedle) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpAlternate {
		return
	}
	for _, sub := range re.Sub {
		l, ok := literalOnly(sub)
		if !ok {
			continue
		}
		ns := litNeedle(l)
		if len(ns) == 0 || len(ns[0].lit) != len(string(l.runes)) {
			continue
		}
		for i := range needles {
			if n := &needles[i]; !n.extra && n.folded == ns[0].folded && bytes.Equal(n.lit, ns[0].lit) {
				n.sure = true
			}
		}
	}
}

// lastBytes returns the bytes a non-empty match of re can end with (every
// byte from 0x80 for a rune outside ASCII), and whether re can match the
// empty string.
func lastBytes(re *syntax.Regexp) (set [256]bool, nullable bool) { return edgeBytes(re, true) }

// anchoredPrefix returns the exact literal a matching line starts with
// when the pattern is ^literal..., and whether the pattern is only that.
func anchoredPrefix(re *syntax.Regexp) (prefix []byte, whole bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 || re.Sub[0].Op != syntax.OpBeginLine {
		return nil, false
	}
	lit := re.Sub[1]
	if lit.Op != syntax.OpLiteral || lit.Flags&syntax.FoldCase != 0 || len(lit.Rune) == 0 || slices.Contains(lit.Rune, utf8.RuneError) {
		return nil, false
	}
	return []byte(string(lit.Rune)), len(re.Sub) == 2
}

// asciiClassOnly reports whether re is a class of ASCII characters,
// repeated at least once: a line matches it if and only if it holds one
// of them.
func asciiClassOnly(re *syntax.Regexp) bool {
	for re.Op == syntax.OpCapture || re.Op == syntax.OpPlus || (re.Op == syntax.OpRepeat && re.Min == 1) {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpCharClass || len(re.Rune) == 0 {
		return false
	}
	return re.Rune[len(re.Rune)-1] < utf8.RuneSelf
}

// firstBytes returns the bytes a non-empty match of re can start with, and
// whether re can match the empty string. Invalid UTF-8 reads as U+FFFD, so
// a rune set holding it adds every byte from 0x80.
func firstBytes(re *syntax.Regexp) (set [256]bool, nullable bool) { return edgeBytes(re, false) }

// edgeBytes returns the bytes a non-empty match of re can start with (or,
// with last, end with), and whether re can match the empty string.
func edgeBytes(re *syntax.Regexp, last bool) (set [256]bool, nullable bool) {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) == 0 {
			return set, true
		}
		r := re.Rune[0]
		if last {
			r = re.Rune[len(re.Rune)-1]
		}
		addEdge(&set, r, r, last)
		if re.Flags&syntax.FoldCase != 0 {
			for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
				addEdge(&set, f, f, last)
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			addEdge(&set, re.Rune[i], re.Rune[i+1], last)
		}
	case syntax.OpAnyCharNotNL, syntax.OpAnyChar:
		for c := range set {
			set[c] = c != '\n' || re.Op == syntax.OpAnyChar
		}
	case syntax.OpNoMatch:
	case syntax.OpCapture, syntax.OpPlus:
		return edgeBytes(re.Sub[0], last)
	case syntax.OpStar, syntax.OpQuest:
		set, _ = edgeBytes(re.Sub[0], last)
		return set, true
	case syntax.OpRepeat:
		set, nullable = edgeBytes(re.Sub[0], last)
		return set, nullable || re.Min == 0
	case syntax.OpConcat:
		for k := range re.Sub {
			sub := re.Sub[k]
			if last {
				sub = re.Sub[len(re.Sub)-1-k]
			}
			s, n := edgeBytes(sub, last)
			orSet(&set, &s)
			if !n {
				return set, false
			}
		}
		return set, true
	case syntax.OpAlternate:
		for _, sub := range re.Sub {
			s, n := edgeBytes(sub, last)
			orSet(&set, &s)
			nullable = nullable || n
		}
		return set, nullable
	default: // empty-width assertions, the empty match
		return set, true
	}
	return set, false
}

// addEdge adds to set the first bytes (or, with last, the last bytes) of
// the UTF-8 encodings of the runes lo to hi. A last byte outside ASCII is
// any byte from 0x80.
func addEdge(set *[256]bool, lo, hi rune, last bool) {
	if !last {
		addRange(set, lo, hi)
		return
	}
	for c := lo; c <= min(hi, utf8.RuneSelf-1); c++ {
		set[c] = true
	}
	if hi >= utf8.RuneSelf {
		for c := 0x80; c < 256; c++ {
			set[c] = true
		}
	}
}

func orSet(dst, src *[256]bool) {
	for i, b := range src {
		dst[i] = dst[i] || b
	}
}

// addRange adds the first bytes of the UTF-8 encodings of lo to hi: the
// lead bytes grow with the rune, so every byte from lo's to hi's.
func addRange(set *[256]bool, lo, hi rune) {
	if lo < utf8.RuneSelf {
		for c := lo; c <= min(hi, utf8.RuneSelf-1); c++ {
			set[c] = true
		}
		lo = utf8.RuneSelf
	}
	if 0xD800 <= lo && lo <= 0xDFFF { // surrogates are no runes in UTF-8
		lo = 0xE000
	}
	if 0xD800 <= hi && hi <= 0xDFFF {
		hi = 0xD7FF
	}
	if lo > hi {
		return
	}
	if lo <= utf8.RuneError && utf8.RuneError <= hi {
		for c := 0x80; c < 256; c++ {
			set[c] = true
		}
		return
	}
	var a, b [utf8.UTFMax]byte
	utf8.EncodeRune(a[:], lo)
	utf8.EncodeRune(b[:], min(hi, unicode.MaxRune))
	for c := int(a[0]); c <= int(b[0]); c++ {
		set[c] = true
	}
}

// indexSet returns the index of the first byte of b in p.set, or -1.
func (p *grepPrefilter) indexSet(b []byte) int {
	const high = 0x8080808080808080
	set := p.set
	i := 0
	if p.high {
		for ; i+16 <= len(b); i += 16 {
			if (binary.LittleEndian.Uint64(b[i:])|binary.LittleEndian.Uint64(b[i+8:]))&high == 0 {
				continue
			}
			for j := i; j < i+16; j++ {
				if set[b[j]] {
					return j
				}
			}
		}
	}
	for ; i < len(b); i++ {
		if set[b[i]] {
			return i
		}
	}
	return -1
}

// grepCursor is the state of a prefilter in one block: where each needle
// is next found. It belongs to one Searcher.
type grepCursor struct {
	p     *grepPrefilter
	block []byte
	hits  []int // per needle, its next hit: -1 none left, below from: to look for
}

// reset starts on a new block.
func (c *grepCursor) reset(p *grepPrefilter, block []byte) {
	c.p, c.block = p, block
	c.hits = c.hits[:0]
	for range p.needles {
		c.hits = append(c.hits, -2)
	}
}

// find returns the first hit of needle n in the block at or after from
// whose neighbours are allowed, or -1.
func (c *grepCursor) find(n *grepNeedle, from int) int {
	for from < len(c.block) {
		i := n.indexIn(c.block[from:], c.p.simd)
		if i < 0 {
			return -1
		}
		h := from + i
		end := h + len(n.lit)
		prev, next := byte('\n'), byte('\n') // at the block's ends, lines end
		if h > 0 {
			prev = c.block[h-1]
		}
		if end < len(c.block) {
			next = c.block[end]
		}
		if (n.before == nil || n.before[prev]) && (n.after == nil || n.after[next]) {
			return h
		}
		from = h + 1
	}
	return -1
}

// holdsAlso reports whether the line from ls to le holds every needle of
// p.also and starts with p.prefix; when it does and the pattern is
// ^prefix, sure is true.
func (c *grepCursor) holdsAlso(ls, le int) (ok, sure bool) {
	p := c.p
	if p.prefix != nil && !bytes.HasPrefix(c.block[ls:le], p.prefix) {
		return false, false
	}
	for k := range p.also {
		if p.also[k].indexIn(c.block[ls:le], p.simd) < 0 {
			return false, false
		}
	}
	return true, p.anchor
}

// next returns the offset of the first hit at or after from (offsets only
// grow within a block), -1 for none, and whether its line surely matches.
// Each needle's search resumes where its last hit was: every needle passes
// over the block once.
func (c *grepCursor) next(from int) (at int, sure bool) {
	p := c.p
	if p.set != nil {
		i := p.indexSet(c.block[from:])
		if i < 0 {
			return -1, false
		}
		return from + i, p.sure
	}
	at = -1
	for k := range p.needles {
		n := &p.needles[k]
		h := c.hits[k]
		if h != -1 && h < from {
			h = c.find(n, from)
			c.hits[k] = h
		}
		switch {
		case h < 0:
		case at < 0 || h < at:
			at, sure = h, n.sure
		case h == at:
			sure = sure || n.sure
		}
	}
	return at, sure
}
