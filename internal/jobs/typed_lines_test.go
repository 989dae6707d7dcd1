package jobs

import (
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
)

// TestTypeLines: the lines a write enters, as a line discipline sees
// them, with what stays pending for the next write.
func TestTypeLines(t *testing.T) {
	for _, tc := range []struct {
		name, pending, text string
		lines               []string
		rest                string
	}{
		{"no enter", "", "rm -r", nil, "rm -r"},
		{"enter completes the pending line", "rm -r", "f x\r", []string{"rm -rf x"}, ""},
		{"CR LF is one enter", "", "a\r\nb\n", []string{"a", "b"}, ""},
		{"empty line", "", "\n", []string{""}, ""},
		{"backspace and DEL", "", "rm -rX\x7ff\bf x\n", []string{"rm -rf x"}, ""},
		{"backspace removes a rune", "", "é\x7fe\n", []string{"e"}, ""},
		{"Ctrl-U clears", "echo", "\x15ls\n", []string{"ls"}, ""},
		{"Ctrl-C clears", "rm -rf /", "\x03", nil, ""},
		{"Ctrl-W removes a word", "", "rm -rf  \x17x\n", []string{"rm x"}, ""},
		{"arrow keys dropped", "", "ls\x1b[A\x1b[1;5D\x1bOA -l\n", []string{"ls -l"}, ""},
		{"tab is a blank", "", "rm\t-rf\n", []string{"rm -rf"}, ""},
		{"other controls dropped", "", "r\x00m\x07\n", []string{"rm"}, ""},
		{"lone escape at the end", "x", "\x1b", nil, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lines, rest := typeLines(tc.pending, tc.text)
			assert.Equal(t, tc.lines, lines)
			assert.Equal(t, tc.rest, rest)
		})
	}
}

// FuzzTypeLines: any input leaves a pending line within its bound, and
// typing in two writes enters what one write of both enters.
func FuzzTypeLines(f *testing.F) {
	for _, s := range []string{"rm -rf /\n", "a\r\nb\x7f\x15c\x1b[A\n", "\x1b[", "é\x7f"} {
		f.Add(s, 3)
	}
	f.Fuzz(func(t *testing.T, text string, cut int) {
		lines, rest := typeLines("", text)
		assert.LessOrEqual(t, len(rest), maxTypedLine)
		if !utf8.ValidString(text) || cut < 0 || cut > len(text) || hasEscapeOrCRLF(text) {
			return
		}
		first, mid := typeLines("", text[:cut])
		second, end := typeLines(mid, text[cut:])
		assert.Equal(t, len(lines), len(first)+len(second))
		assert.Equal(t, rest, end)
	})
}

// hasEscapeOrCRLF reports text holding what a cut may split differently
// (an escape sequence, a CR LF pair, a rune a backspace removes whole).
func hasEscapeOrCRLF(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0x1b || s[i] == '\r' || s[i] >= 0x80 {
			return true
		}
	}
	return false
}
