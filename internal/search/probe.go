package search

import "bytes"

// A probe finds where a needle may start without a pass per byte of it:
// two of its bytes, the rarest at two different offsets, are compared at
// every position of the block at once, 32 positions per step with AVX2
// (probe_amd64.s), after an OR with a mask: 0x20 for a letter of a
// case-insensitive needle, so that one comparison takes both cases and
// the block is never lowered; 0 for any other byte. A position the probe
// passes is then checked against the whole needle.

// grepProbe is the pair of bytes a needle is looked for by.
type grepProbe struct {
	o1, o2 int  // offsets in the needle of the two bytes
	b1, b2 byte // their values (lowered in a case-insensitive needle)
	m1, m2 byte // ORed into the text's bytes before they are compared
	span   int  // len(needle) - 1: a candidate start leaves room for the needle
}

// newGrepProbe returns the probe of lit, a needle lowered when folded.
func newGrepProbe(lit []byte, folded bool) grepProbe {
	o1 := rarestAt(lit)
	o2 := o1
	for i := range lit { // the next rarest, at another offset
		if i != o1 && (o2 == o1 || byteRarity(lit[i]) > byteRarity(lit[o2])) {
			o2 = i
		}
	}
	mask := func(c byte) byte {
		if folded && 'a' <= c && c <= 'z' {
			return 0x20
		}
		return 0
	}
	return grepProbe{o1: o1, o2: o2, b1: lit[o1], b2: lit[o2], m1: mask(lit[o1]), m2: mask(lit[o2]), span: len(lit) - 1}
}

// index returns the first i with s[i+o1]|m1 == b1 and s[i+o2]|m2 == b2
// and room for the needle at i, or -1. With simd it uses AVX2 where the
// machine has it.
func (p *grepProbe) index(s []byte, simd bool) int {
	n := len(s) - p.span // candidate starts
	if n <= 0 {
		return -1
	}
	i := 0
	if simd && grepHasAVX2 && n >= 32 {
		if r := indexProbeAVX2(s, n&^31, p.o1, p.o2, p.b1, p.b2, p.m1, p.m2); r >= 0 {
			return r
		}
		i = n &^ 31 // the tail, under 32 positions
	}
	if r := p.indexGo(s[i:], n-i); r >= 0 {
		return i + r
	}
	return -1
}

// indexGo is index without SIMD of its own: bytes.IndexByte (which has
// it) jumps to the exact byte of the pair, or to either case of the first
// byte when both are letters of a case-insensitive needle.
func (p *grepProbe) indexGo(s []byte, n int) int {
	o, b, m, oo, bb, mm := p.o1, p.b1, p.m1, p.o2, p.b2, p.m2
	if m != 0 && mm == 0 { // jump by the exact byte
		o, b, m, oo, bb, mm = oo, bb, mm, o, b, m
	}
	if m == 0 {
		for i := 0; i < n; i++ {
			j := bytes.IndexByte(s[i+o:n+o], b)
			if j < 0 {
				return -1
			}
			i += j
			if s[i+oo]|mm == bb {
				return i
			}
		}
		return -1
	}
	// both bytes are letters: the next of either case of the first, looked
	// for in windows that double from 64 bytes, so that a call costs about
	// the distance to the candidate it returns, not the rest of s when one
	// case is absent from it (each call started over from i)
	for i, w := 0, 64; i < n; w *= 2 {
		end := min(n, i+w)
		win := s[i+o : end+o]
		lo, up := bytes.IndexByte(win, b), bytes.IndexByte(win, b&^0x20)
		for lo >= 0 || up >= 0 {
			j := lo
			if lo < 0 || (up >= 0 && up < lo) {
				j = up
			}
			if s[i+j+oo]|mm == bb {
				return i + j
			}
			if j == lo {
				if lo = bytes.IndexByte(win[j+1:], b); lo >= 0 {
					lo += j + 1
				}
			} else if up = bytes.IndexByte(win[j+1:], b&^0x20); up >= 0 {
				up += j + 1
			}
		}
		i = end
	}
	return -1
}
