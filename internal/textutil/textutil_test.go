package textutil

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

func TestHumanSize(t *testing.T) {
	for n, want := range map[int64]string{
		0: "0B", 1023: "1023B", 1024: "1.0KB", 50 * 1024: "50.0KB", 1536: "1.5KB",
		1 << 20: "1.0MB", 5<<30 + 1<<29: "5.5GB",
	} {
		assert.Equal(t, want, HumanSize(n), n)
	}
}

func TestIsBinary(t *testing.T) {
	assert.False(t, IsBinary([]byte("hello\n")))
	assert.True(t, IsBinary([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")))
	late := strings.Repeat("a", SniffLen) + "\x00"
	assert.False(t, IsBinary([]byte(late)), "only the first 8 KiB count")
	head, err := ReadHead(strings.NewReader(late))
	assert.NoError(t, err)
	assert.Len(t, head, SniffLen)
}

func TestCountLines(t *testing.T) {
	assert.Equal(t, 0, CountLines(""))
	assert.Equal(t, 1, CountLines("a"))
	assert.Equal(t, 1, CountLines("a\n"))
	assert.Equal(t, 2, CountLines("a\nb"))
	assert.Equal(t, 2, CountLines("\n\n"))
}

func TestHead(t *testing.T) {
	tests := []struct {
		name            string
		in              string
		lines, bytes    int
		want            string
		truncated, byB  bool
		outLines, total int
		cut             bool
	}{
		{"fits", "a\nb\n", 10, 100, "a\nb\n", false, false, 2, 2, false},
		{"line cap", "a\nb\nc", 2, 100, "a\nb", true, false, 2, 3, false},
		{"byte cap keeps whole lines", "aaa\nbbb\nccc", 10, 8, "aaa\nbbb", true, true, 2, 3, false},
		{"byte cap exact", "aaa\nbbb", 10, 7, "aaa\nbbb", false, false, 2, 2, false},
		{"long first line cut", "abcdef\nx", 10, 4, "abcd", true, true, 1, 2, true},
		{"no caps", "a\nb", 0, 0, "a\nb", false, false, 2, 2, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Head(tt.in, tt.lines, tt.bytes)
			assert.Equal(t, tt.want, got.Content)
			assert.Equal(t, tt.truncated, got.Truncated)
			assert.Equal(t, tt.byB, got.ByBytes)
			assert.Equal(t, tt.outLines, got.OutputLines)
			assert.Equal(t, tt.total, got.TotalLines)
			assert.Equal(t, tt.cut, got.LineCut)
		})
	}
}

func TestTail(t *testing.T) {
	got := Tail("a\nb\nc\n", 2, 100)
	assert.Equal(t, "b\nc", got.Content)
	assert.True(t, got.Truncated)
	got = Tail("aaa\nbbb\nccc", 10, 8)
	assert.Equal(t, "bbb\nccc", got.Content)
	assert.True(t, got.ByBytes)
	got = Tail("x\nabcdef", 10, 4)
	assert.Equal(t, "cdef", got.Content)
	assert.True(t, got.LineCut)
	got = Tail("a\nb", 5, 50)
	assert.Equal(t, "a\nb", got.Content)
	assert.False(t, got.Truncated)
}

func TestCutUTF8(t *testing.T) {
	s := "héllo wörld ✓"
	for n := 0; n <= len(s)+1; n++ {
		p := CutUTF8(s, n)
		assert.LessOrEqual(t, len(p), n)
		assert.True(t, utf8.ValidString(p), n)
		assert.True(t, strings.HasPrefix(s, p))
		q := CutUTF8Start(s, n)
		assert.LessOrEqual(t, len(q), n)
		assert.True(t, utf8.ValidString(q), n)
		assert.True(t, strings.HasSuffix(s, q))
	}
	assert.Equal(t, "h", CutUTF8("hé", 2))
	// Bytes that are not UTF-8 are cut at n: walking back to a rune start
	// would keep nothing of 100 continuation bytes capped at 50.
	notUTF8 := strings.Repeat("\x80", 100)
	assert.Equal(t, notUTF8[:50], CutUTF8(notUTF8, 50))
	assert.Equal(t, notUTF8[:50], CutUTF8Start(notUTF8, 50))
}
