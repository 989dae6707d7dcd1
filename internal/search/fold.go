package search

import (
	"unicode"
	"unicode/utf8"
)

// Case-insensitive search without a regular expression per byte: a
// literal is lowered (ASCII letters only) and its probe (probe.go)
// takes both cases of its letters, so the block itself is never lowered
// or copied. Unicode simple folding gives two ASCII letters a variant
// outside ASCII (k: U+212A KELVIN SIGN, s: U+017F LONG S); a literal holding
// them also looks for those runes as they are, and the regular expression
// decides on the lines they are found in.

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
