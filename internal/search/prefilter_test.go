package search

import (
	"bytes"
	"context"
	"math/rand/v2"
	"regexp"
	"regexp/syntax"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grepTrickyTokens make up the lines the fast paths are checked on: case
// variants inside and outside ASCII (K is KELVIN SIGN, ſ LONG S), runes
// whose UTF-8 starts with the same byte as a Greek letter, invalid UTF-8.
var grepTrickyTokens = []string{
	"unmarshal", "UnMarshal", "UNMARSHAL", "unmarſhal", "KISS", "Kiss", "kiſs", "Kiss", "ſ", "K", "k", "s",
	"é", "É", "Été", "été", "straße", "STRASSE", "ẞ", "αβγ", "ΑΒΓ", "ω", "Ω", "µ", "μ", "ϐ", "Ͱ", "ς", "Σ",
	"Error(", "xError(", "ERROR(", "error", "func", "FUNC", "Func", "ctx", "(ctx)", "Dial", "dial", "LISTEN",
	"Accept", "x", "y", "q", "\xff", "\xce", "\xcf\x80", "\xe2\x84", "\r", "0", "2024-01-02", "JSON",
	"MarshalJSON", "UnmarshalJSON", " ", " ", "\t", "_", "\n", "\n", "\n", "-", "1-", "-:", "-9", "?", "12",
}

// grepTrickyText returns n tokens of grepTrickyTokens drawn with seed.
func grepTrickyText(seed uint64, n int) []byte {
	r := rand.New(rand.NewPCG(seed, 16))
	var b bytes.Buffer
	for range n {
		b.WriteString(grepTrickyTokens[r.IntN(len(grepTrickyTokens))])
	}
	return b.Bytes()
}

// grepFastPathPatterns exercise every prefilter: exact and folded needles
// (with the K and ſ variants), alternations, literals inside regular
// expressions, first-byte sets (few bytes, bytes outside ASCII, ASCII
// classes) and none.
var grepFastPathPatterns = []string{
	"unmarshal", "UNMARSHAL", "kiss", "KISS", "ſ", "K", "k", "s", "é", "Été", "straße", "ẞ", "σ", "Σ", "µ",
	`\w+Error\(`, `func.*error`, `(Unmarshal|Marshal)JSON`, `Dial|Listen|Accept`, `dial|Listen|ſ`,
	`[α-ω]+`, `\p{Greek}`, `[\x{370}-\x{3FF}]`, `[A-Z]+`, `[A-Z]{3}`, `[0-9]{4}-[0-9]{2}`, `x[^q]*y`,
	`^func`, `\bctx\b`, `[^\x00-\x7f]`, `\x{FFFD}`, `[é-ü]x?`, `k+`, `(?:Kiss|ſ)+`, `[xyz]`, `x*`,
	`(?i)K(?-i)iss`, `Func|unmarshal`, "(ctx)", "2024-01-02", `^func`, `^Func.*error`, `^Kiss`, `^é`,
	`^\x{FFFD}x`, `unmarshal.*JSON`, `Error\(.*ctx`, `[0-9]{4}-[0-9]{2}-[0-9]{2}`, `[^a]Kiss\s`, `ωError\(`,
	`[ſs]kiss.`, `\x{FFFD}Error\(`, `.ctx.`, `x+Kiss`, `\bctx\b`, `\bKiss\b`, `\b(ctx)`, `\bé`, `x\b`,
	`\(ctx\b`, `\bError\(`, `\b\bss`, `Kiss|ctx`, `(é|Été)`, `[0-9]-[0-9]`, `[0-9]-\b`, `-[0-9:;]`, `-[0-9]?x`,
}

func TestGrepFastPathsMatchReference(t *testing.T) {
	t.Parallel()
	data := grepTrickyText(1, 20000)
	for _, pattern := range grepFastPathPatterns {
		for _, mode := range []struct {
			literal, ignoreCase bool
		}{{false, false}, {true, false}, {false, true}, {true, true}} {
			ref := pattern
			if mode.literal {
				ref = regexp.QuoteMeta(pattern)
			}
			if mode.ignoreCase {
				ref = "(?i)" + ref
			}
			want := naiveGrep(data, regexp.MustCompile(ref), 0)
			for _, size := range []int{7, 100, BlockMin} {
				for _, simd := range []bool{true, false} {
					q, err := Compile(pattern, mode.literal, mode.ignoreCase, 0)
					require.NoError(t, err)
					if q.pre != nil {
						q.pre.simd = simd
					}
					if !simd { // and every line is long: tested in windows
						q.longLine = 4
					}
					s := &Searcher{q: q, limit: 1 << 30, buf: make([]byte, size)}
					res, err := s.Search(context.Background(), bytes.NewReader(data))
					got, n := res.text, res.matches
					require.NoError(t, err)
					assert.Equal(t, len(want), n, "pattern %q %+v block %d simd %v", pattern, mode, size, simd)
					assert.Equal(t, grepText(want, 0), got, "pattern %q %+v block %d simd %v", pattern, mode, size, simd)
				}
			}
		}
	}
}

func FuzzGrepFastPaths(f *testing.F) {
	f.Add([]byte("unmarſhal\nKISS kiſs\nΑΒΓ é\n"), uint8(0), uint8(3))
	f.Add([]byte("Error(\nxError(\nERROR(\n"), uint8(15), uint8(2))
	f.Add([]byte("\xce\n\xcf\x80x\nω\xff\n"), uint8(20), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, pat, mode uint8) {
		if bytes.IndexByte(data, 0) >= 0 {
			return
		}
		pattern := grepFastPathPatterns[int(pat)%len(grepFastPathPatterns)]
		literal, ignoreCase := mode&1 != 0, mode&2 != 0
		ref := pattern
		if literal {
			ref = regexp.QuoteMeta(pattern)
		}
		if ignoreCase {
			ref = "(?i)" + ref
		}
		q, err := Compile(pattern, literal, ignoreCase, 0)
		require.NoError(t, err)
		if q.pre != nil {
			q.pre.simd = mode&4 != 0
		}
		q.longLine = int(mode>>3) * 4 // small: most lines are tested in windows
		s := &Searcher{q: q, limit: 1 << 30, buf: make([]byte, 1+int(mode>>3))}
		res, err := s.Search(context.Background(), bytes.NewReader(data))
		got, _ := res.text, res.matches
		require.NoError(t, err)
		assert.Equal(t, grepText(naiveGrep(data, regexp.MustCompile(ref), 0), 0), got,
			"pattern %q literal %v ignoreCase %v data %q", pattern, literal, ignoreCase, data)
	})
}

// TestGrepPrefilterKinds pins the prefilter each kind of pattern gets, so
// that a fast path cannot silently turn into the slow one.
func TestGrepPrefilterKinds(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern    string
		literal    bool
		ignoreCase bool
		want       string // needles as lit/folded/sure/extra, set:..., or none
	}{
		{"NewReplacer(", true, false, "NewReplacer( sure"},
		{"unmarshal", true, true, "unmarshal folded sure|\u017f extra"},
		{"NewReplacer", true, true, "newreplacer folded sure"},
		{"kiss", false, true, "kiss folded sure|\u212a extra|\u017f extra"},
		{"Été", false, true, "\xc3"},                                  // É and é start with 0xC3,
		{"func.*error", false, true, "func folded also error folded"}, // f is rarer than e
		{"^func", false, false, "func prefix func anchor"},
		{"^func.*error", false, false, "func also error prefix func"},
		{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, false, false, "- near after"},
		{`[0-9]{4}-[0-9]{2}-[0-9]{2}`, false, true, "- near after"},
		{`[0-9]-\b`, false, false, "- near"}, // word bytes differ in too many bits: no probe after
		{`(Unmarshal|Marshal)JSON`, false, false, "JSON near"},
		{`\w+Error\(`, false, false, "Error( near"},
		{"err", false, false, "err sure"},
		{`\bctx\b`, false, false, "ctx sure near"},
		{`\bctx\b`, false, true, "ctx folded sure near"},
		{`\bctx\(`, false, false, "ctx( sure near"},
		{`Dial|Listen|Accept`, false, false, "Dial sure|Listen sure|Accept sure"},
		{`dial|listen|kiss`, false, true, "dial folded sure|listen folded sure|\u017f extra|kiss folded sure|\u212a extra|\u017f extra"},
		{`\w+Error\(`, false, true, "error( folded near"},
		{`[α-ω]+`, false, false, "\xce|\xcf"},
		{`\p{Greek}`, false, false, "set high"},
		{`[A-Z]+`, false, false, "set sure"},
		{`[A-Z]{3}`, false, false, "none"},
		{`x*`, false, false, "none"},
		{"x[^q]*y", false, false, "y"}, // x is more frequent,
	}
	for _, tt := range tests {
		q, err := Compile(tt.pattern, tt.literal, tt.ignoreCase, 0)
		require.NoError(t, err)
		assert.Equal(t, tt.want, describePrefilter(q.pre), "pattern %q literal %v ignoreCase %v", tt.pattern, tt.literal, tt.ignoreCase)
	}
}

func describePrefilter(p *grepPrefilter) string {
	switch {
	case p == nil:
		return "none"
	case p.set != nil:
		s := "set"
		if p.high {
			s += " high"
		}
		if p.sure {
			s += " sure"
		}
		return s
	}
	var parts []string
	for _, n := range p.needles {
		s := string(n.lit)
		for _, f := range []struct {
			on   bool
			name string
		}{{n.folded, "folded"}, {n.sure, "sure"}, {n.extra, "extra"}, {n.before != nil || n.after != nil, "near"}, {n.probe.span >= len(n.lit), "after"}} {
			if f.on {
				s += " " + f.name
			}
		}
		parts = append(parts, s)
	}
	out := strings.Join(parts, "|")
	for _, n := range p.also {
		out += " also " + string(n.lit)
		if n.folded {
			out += " folded"
		}
	}
	if p.prefix != nil {
		out += " prefix " + string(p.prefix)
	}
	if p.anchor {
		out += " anchor"
	}
	return out
}

// TestGrepNeedleIndexIn checks a needle's search, with and without SIMD,
// against bytes.Index on text lowered the way a folded needle matches
// (ASCII letters only): every letter in either case, nothing else folded.
func TestGrepNeedleIndexIn(t *testing.T) {
	t.Parallel()
	lowerASCII := func(b []byte) []byte {
		out := bytes.Clone(b)
		for i, c := range out {
			if 'A' <= c && c <= 'Z' {
				out[i] = c + 'a' - 'A'
			}
		}
		return out
	}
	data := grepTrickyText(7, 3000)
	for _, lit := range []string{"unmarshal", "kiss", "error(", "é", "x", "(ctx)", "2024-01-02", "json", "\xff", "ss"} {
		for _, folded := range []bool{false, true} {
			n := grepNeedle{lit: []byte(lit), folded: folded}
			n.probe = newGrepProbe(n.lit, folded)
			hay := data
			if folded {
				hay = lowerASCII(data)
			}
			for _, simd := range []bool{true, false} {
				for from := 0; from <= len(data); {
					want := bytes.Index(hay[from:], n.lit)
					require.Equal(t, want, n.indexIn(data[from:], simd), "needle %q folded %v simd %v from %d", lit, folded, simd, from)
					if want < 0 {
						break
					}
					from += want + 1
				}
			}
		}
	}
}

// TestFirstBytesSound checks on every rune of the classes of the fast-path
// patterns that its first byte is in the set the prefilter searches for.
func TestFirstBytesSound(t *testing.T) {
	t.Parallel()
	for _, pattern := range []string{`[α-ω]+`, `\p{Greek}`, `(?i)[α-ω]`, `[^\x00-\x7f]`, `[\x{D7F0}-\x{E010}]`, `(?i)é`, `(?i)k`, `[é-ü]x?`} {
		re, err := syntax.Parse(pattern, syntax.Perl)
		require.NoError(t, err)
		set, nullable := firstBytes(re)
		require.False(t, nullable, pattern)
		prog := regexp.MustCompile(`^(?:` + pattern + `)`)
		for r := rune(0); r <= 0x10FFFF; r++ {
			if r >= 0xD800 && r <= 0xDFFF {
				continue
			}
			s := string(r)
			if prog.MatchString(s + "x") {
				require.True(t, set[s[0]], "pattern %q rune %U: first byte %#x not in the set", pattern, r, s[0])
			}
		}
		for c := 0x80; c < 256; c++ { // invalid UTF-8 reads as U+FFFD
			if prog.Match([]byte{byte(c), 'x'}) {
				require.True(t, set[c], "pattern %q byte %#x", pattern, c)
			}
		}
	}
}
