package codetools

import (
	"encoding/binary"
	"unicode"
	"unicode/utf8"
)

// Case-insensitive search without a regular expression per byte: the block
// is lowered once (ASCII letters only, so every offset stays the same) into
// a reused buffer, and a literal lowered the same way is found in it with
// bytes.Index. Unicode simple folding gives two ASCII letters a variant
// outside ASCII (k: U+212A KELVIN SIGN, s: U+017F LONG S); a literal holding
// them also looks for those runes as they are, and the regular expression
// decides on the lines they are found in.

// lowerASCII writes src with 'A'-'Z' lowered to dst (as long as src),
// eight bytes at a time; other bytes are copied.
func lowerASCII(dst, src []byte) {
	const (
		ones = 0x0101010101010101
		high = 0x80 * ones
	)
	dst = dst[:len(src)]
	lower := func(w uint64) uint64 {
		h := w &^ high                 // each byte below 0x80: no carry between bytes below
		ge := h + (0x80-'A')*ones      // top bit set where h >= 'A'
		gt := h + (0x80-'Z'-1)*ones    // top bit set where h > 'Z'
		return w | (ge&^gt&^w&high)>>2 // 0x80>>2 is 'a'-'A'
	}
	i := 0
	for ; i+16 <= len(src); i += 16 { // two words at once
		a, b := binary.LittleEndian.Uint64(src[i:]), binary.LittleEndian.Uint64(src[i+8:])
		binary.LittleEndian.PutUint64(dst[i:], lower(a))
		binary.LittleEndian.PutUint64(dst[i+8:], lower(b))
	}
	for ; i+8 <= len(src); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], lower(binary.LittleEndian.Uint64(src[i:])))
	}
	for ; i < len(src); i++ {
		c := src[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst[i] = c
	}
}

// caseless reports whether r has no other case under Unicode simple
// folding.
func caseless(r rune) bool { return unicode.SimpleFold(r) == r }

// foldVariantsOutsideASCII returns, UTF-8 encoded, the runes outside ASCII
// that fold to the ASCII letter c (K for k, ſ for s), nil for the others.
func foldVariantsOutsideASCII(c rune) [][]byte {
	var out [][]byte
	for r := unicode.SimpleFold(c); r != c; r = unicode.SimpleFold(r) {
		if r >= utf8.RuneSelf {
			out = append(out, []byte(string(r)))
		}
	}
	return out
}
