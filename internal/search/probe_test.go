package search

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// naiveProbe is index by definition, one position after another.
func naiveProbe(p *grepProbe, s []byte) int {
	for i := 0; i+p.span < len(s); i++ {
		if s[i+p.o1]|p.m1 == p.b1 && s[i+p.o2]|p.m2 == p.b2 {
			return i
		}
	}
	return -1
}

// checkProbe compares index, with and without SIMD, with naiveProbe on s
// and on every suffix of it that starts near a hit.
func checkProbe(t *testing.T, lit []byte, folded bool, s []byte) {
	t.Helper()
	p := newGrepProbe(lit, folded)
	for from := 0; from <= len(s); {
		want := naiveProbe(&p, s[from:])
		for _, simd := range []bool{true, false} {
			require.Equal(t, want, p.index(s[from:], simd), "needle %q folded %v simd %v from %d of %d", lit, folded, simd, from, len(s))
		}
		if want < 0 {
			break
		}
		from += want + 1
	}
}

func TestGrepProbe(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("abcABC xyzXYZ@`[{\n\xc3\xa9")
	for _, size := range []int{0, 1, 5, 31, 32, 33, 63, 64, 65, 95, 96, 127, 200, 1000, 5000} {
		for _, lit := range []string{"a", "A", "ab", "aB", "abc", "xyz", "c@", "@`", "[", "{", "é", "ab\xc3", "zz", "cab a"} {
			for _, folded := range []bool{false, true} {
				l := []byte(lit)
				if folded {
					l = bytes.ToLower(l)
				}
				s := make([]byte, size)
				for i := range s {
					s[i] = alphabet[r.IntN(len(alphabet))]
				}
				checkProbe(t, l, folded, s)
			}
		}
	}
}

// TestGrepProbeFoldsOnlyLetters: with a case-insensitive needle, the probe
// takes both cases of a letter and nothing else for it (the mask 0x20
// would also join @ and `, [ and {).
func TestGrepProbeFoldsOnlyLetters(t *testing.T) {
	t.Parallel()
	p := newGrepProbe([]byte("q@"), true)
	text := bytes.Repeat([]byte("q`Q`q[Q{"), 20)
	assert.Equal(t, -1, p.index(text, true))
	assert.Equal(t, -1, p.index(text, false))
	text = append(text, "xQ@"...)
	assert.Equal(t, len(text)-2, p.index(text, true))
	assert.Equal(t, len(text)-2, p.index(text, false))
}

func FuzzGrepProbe(f *testing.F) {
	f.Add([]byte("ab"), []byte("xxAbxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxab"), true)
	f.Add([]byte("é"), []byte("\xc3\xa9\xc3\x89"), false)
	f.Fuzz(func(t *testing.T, lit, s []byte, folded bool) {
		if len(lit) == 0 || len(lit) > 64 {
			return
		}
		if folded {
			lit = bytes.ToLower(lit)
		}
		checkProbe(t, lit, folded, s)
	})
}

// BenchmarkProbeCall is the cost of one call of the probe that finds a
// candidate at once: what every hit of a needle pays. It was some 350 ns
// with AVX2 when the bytes were broadcast through general registers.
func BenchmarkProbeCall(b *testing.B) {
	p := newGrepProbe([]byte("listen"), true)
	data := append([]byte("LIsten"), bytes.Repeat([]byte("x"), 4096)...)
	for b.Loop() {
		if p.index(data, true) != 0 {
			b.Fatal("no candidate at 0")
		}
	}
}

// BenchmarkProbeGoOneCase is the probe without SIMD on 1 MiB where every
// candidate of a case-insensitive needle is lower case: a call looked for
// the upper case to the end of the text, a pass per candidate.
func BenchmarkProbeGoOneCase(b *testing.B) {
	p := newGrepProbe([]byte("listen"), true)
	data := bytes.Repeat([]byte("li"+strings.Repeat("x", 62)), 1<<14)
	for b.Loop() {
		for from := 0; ; {
			i := p.index(data[from:], false)
			if i < 0 {
				break
			}
			from += i + 1
		}
	}
}
