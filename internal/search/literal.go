package search

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Literal extraction: the strings one of which every match of a regular
// expression holds, read from its parse tree, become the needles of a
// prefilter (prefilter.go) that finds candidate lines before the
// regular expression runs on them.

// grepMaxNeedles bounds the needles of one prefilter: each is a pass over
// the block.
const grepMaxNeedles = 6

// grepLit is a literal of the parse tree: every match holds runes, in one of
// their case variants when fold is set.
type grepLit struct {
	runes []rune
	fold  bool
}

// requiredLits returns literals one of which every match of re holds, or
// nil when it finds none worth searching for. Of the sub-expressions of a
// concatenation it keeps the best set (betterNeedles); an alternation needs
// a set from each branch.
func requiredLits(re *syntax.Regexp) []grepLit {
	switch re.Op {
	case syntax.OpLiteral:
		if len(re.Rune) > 0 {
			return []grepLit{{runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0}}
		}
	case syntax.OpCapture, syntax.OpPlus:
		return requiredLits(re.Sub[0])
	case syntax.OpRepeat:
		if re.Min >= 1 {
			return requiredLits(re.Sub[0])
		}
	case syntax.OpConcat:
		var best []grepLit
		for _, sub := range re.Sub {
			if l := requiredLits(sub); l != nil && (best == nil || betterNeedles(litNeedles(l), litNeedles(best))) {
				best = l
			}
		}
		return best
	case syntax.OpAlternate:
		var all []grepLit
		for _, sub := range re.Sub {
			l := requiredLits(sub)
			if l == nil || len(all)+len(l) > grepMaxNeedles {
				return nil
			}
			all = append(all, l...)
		}
		return all
	}
	return nil
}

// litNeedles returns the needles that find every occurrence of the
// literals, or nil when one of them has none (a case-insensitive literal
// whose every rune has a case variant outside ASCII).
func litNeedles(lits []grepLit) []grepNeedle {
	var out []grepNeedle
	for _, l := range lits {
		n := litNeedle(l)
		if n == nil {
			return nil
		}
		out = append(out, n...)
	}
	return out
}

// litNeedle returns the needles for one literal: its longest run of plain
// runes, nil when it has none. U+FFFD is never plain: it matches invalid
// UTF-8, whatever the bytes. In an exact literal every other rune is plain
// and the run is one needle. In a case-insensitive one, runes in ASCII and
// caseless ones are: the run, lowered, is looked for in the lowered block,
// and, when it holds k or s, their variants outside ASCII as they are
// (extra needles).
func litNeedle(l grepLit) []grepNeedle {
	plain := func(r rune) bool {
		return r != utf8.RuneError && (!l.fold || r < utf8.RuneSelf || caseless(r))
	}
	bestAt, bestLen := 0, 0
	for i := 0; i < len(l.runes); {
		j := i
		for j < len(l.runes) && plain(l.runes[j]) {
			j++
		}
		if j-i > bestLen {
			bestAt, bestLen = i, j-i
		}
		i = j + 1
	}
	if bestLen == 0 {
		return nil
	}
	run := l.runes[bestAt : bestAt+bestLen]
	if !l.fold {
		return []grepNeedle{{lit: []byte(string(run))}}
	}
	main := grepNeedle{}
	var extra []grepNeedle
	seen := map[rune]bool{}
	for _, r := range run {
		if r < utf8.RuneSelf {
			r = unicode.ToLower(r)
			if 'a' <= r && r <= 'z' {
				main.folded = true
				if !seen[r] {
					seen[r] = true
					for _, v := range foldVariantsOutsideASCII(r) {
						extra = append(extra, grepNeedle{lit: v, extra: true})
					}
				}
			}
		}
		main.lit = utf8.AppendRune(main.lit, r)
	}
	return append([]grepNeedle{main}, extra...)
}

// betterNeedles reports whether needle set a is likely to be found faster,
// and to find fewer lines that do not match, than b: needles of at least
// four bytes first, then fewer of them, then the rarer first byte (where
// bytes.Index starts), then longer ones. Extra needles (rare variants) are
// not counted.
func betterNeedles(a, b []grepNeedle) bool {
	if b == nil {
		return a != nil
	}
	if a == nil {
		return false
	}
	na, la := needleStats(a)
	nb, lb := needleStats(b)
	if min(la, 4) != min(lb, 4) {
		return min(la, 4) > min(lb, 4)
	}
	if na != nb {
		return na < nb
	}
	if ra, rb := firstByteRarity(a), firstByteRarity(b); ra != rb {
		return ra > rb
	}
	return la > lb
}

// grepByteOrder is the printable ASCII of Go source lowered, most frequent
// first (measured on GOROOT/src): a byte's place in it tells how often
// bytes.Index stops on it.
const grepByteOrder = " et\tran0si\nox,clfdupm.1/g():bh2\"v=y_4{}36\\8wk597[]*-!zq&+<%;|j'>`#^$?@~"

// byteRarity returns the place of c in grepByteOrder: upper case letters
// count as rarer than lower case ones, bytes not in it as rarest.
func byteRarity(c byte) int {
	k := 0
	if 'A' <= c && c <= 'Z' {
		c, k = c+'a'-'A', 20
	}
	if i := strings.IndexByte(grepByteOrder, c); i >= 0 {
		return i + k
	}
	return len(grepByteOrder) + 20
}

// rarestAt returns the offset of the rarest byte of lit, the first on a
// tie.
func rarestAt(lit []byte) int {
	at := 0
	for i := range lit {
		if byteRarity(lit[i]) > byteRarity(lit[at]) {
			at = i
		}
	}
	return at
}

// firstByteRarity returns the smallest rarity of the bytes a set's needles
// are looked for by (their rarest).
func firstByteRarity(ns []grepNeedle) int {
	r := len(grepByteOrder) + 20
	for _, n := range ns {
		if !n.extra {
			r = min(r, byteRarity(n.lit[rarestAt(n.lit)]))
		}
	}
	return r
}

// needleStats returns the number of needles of a set (extras left out)
// and the length of the shortest.
func needleStats(ns []grepNeedle) (count, shortest int) {
	for _, n := range ns {
		if n.extra {
			continue
		}
		if count == 0 || len(n.lit) < shortest {
			shortest = len(n.lit)
		}
		count++
	}
	return count, shortest
}

// literalOnly returns the literal re is, captures aside, and whether it is
// one.
func literalOnly(re *syntax.Regexp) (grepLit, bool) {
	for re.Op == syntax.OpCapture {
		re = re.Sub[0]
	}
	if re.Op != syntax.OpLiteral || len(re.Rune) == 0 {
		return grepLit{}, false
	}
	return grepLit{runes: re.Rune, fold: re.Flags&syntax.FoldCase != 0}, true
}
