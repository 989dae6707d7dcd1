package textutil

import (
	"strings"
	"unicode/utf8"
)

// Truncation is the outcome of [Head] or [Tail].
type Truncation struct {
	// Content is the text kept.
	Content string
	// Truncated reports whether anything was left out.
	Truncated bool
	// ByBytes reports that the byte cap, not the line cap, stopped it.
	ByBytes bool
	// TotalLines and TotalBytes describe the whole input.
	TotalLines, TotalBytes int
	// OutputLines is how many lines (whole or cut) Content holds.
	OutputLines int
	// LineCut reports that a single line longer than the byte cap was cut
	// (at a UTF-8 boundary) because keeping no line at all would say
	// nothing: its start for Head, its end for Tail.
	LineCut bool
}

// CountLines counts the lines of s: its newlines, plus one for a last line
// without a newline. The empty string has no lines.
func CountLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && !strings.HasSuffix(s, "\n") {
		n++
	}
	return n
}

// splitLines splits s into lines without their "\n"; a final newline does
// not start an extra empty line.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Head keeps the first lines of s, at most maxLines lines and maxBytes bytes
// (lines joined with "\n"; a cap <= 0 means no cap), never cutting a line in
// half, except a first line alone longer than maxBytes, which is cut (see
// [Truncation.LineCut]).
func Head(s string, maxLines, maxBytes int) Truncation {
	lines := splitLines(s)
	t := Truncation{TotalLines: len(lines), TotalBytes: len(s)}
	size := 0
	var kept int
	for i, line := range lines {
		if maxLines > 0 && i >= maxLines {
			t.Truncated = true
			break
		}
		add := len(line)
		if i > 0 {
			add++
		}
		if maxBytes > 0 && size+add > maxBytes {
			t.Truncated, t.ByBytes = true, true
			if i == 0 {
				t.Content, t.OutputLines, t.LineCut = CutUTF8(line, maxBytes), 1, true
				return t
			}
			break
		}
		size += add
		kept = i + 1
	}
	if !t.Truncated {
		t.Content, t.OutputLines = s, len(lines)
		return t
	}
	t.Content, t.OutputLines = strings.Join(lines[:kept], "\n"), kept
	return t
}

// Tail keeps the last lines of s, at most maxLines lines and maxBytes bytes
// (a cap <= 0 means no cap), never cutting a line in half, except a last
// line alone longer than maxBytes, whose end is kept (see
// [Truncation.LineCut]).
func Tail(s string, maxLines, maxBytes int) Truncation {
	lines := splitLines(s)
	t := Truncation{TotalLines: len(lines), TotalBytes: len(s)}
	size := 0
	first := len(lines)
	for i := len(lines) - 1; i >= 0; i-- {
		n := len(lines) - i
		if maxLines > 0 && n > maxLines {
			t.Truncated = true
			break
		}
		add := len(lines[i])
		if i < len(lines)-1 {
			add++
		}
		if maxBytes > 0 && size+add > maxBytes {
			t.Truncated, t.ByBytes = true, true
			if i == len(lines)-1 {
				t.Content, t.OutputLines, t.LineCut = CutUTF8Start(lines[i], maxBytes), 1, true
				return t
			}
			break
		}
		size += add
		first = i
	}
	if !t.Truncated {
		t.Content, t.OutputLines = s, len(lines)
		return t
	}
	t.Content, t.OutputLines = strings.Join(lines[first:], "\n"), len(lines)-first
	return t
}

// CutUTF8 returns the longest prefix of s of at most n bytes that does not
// split a UTF-8 sequence.
func CutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := n
	for i > 0 && i > n-utf8.UTFMax && !utf8.RuneStart(s[i]) {
		i--
	}
	if !utf8.RuneStart(s[i]) { // not UTF-8 here: cut at n
		return s[:n]
	}
	return s[:i]
}

// CutUTF8Start returns the longest suffix of s of at most n bytes that does
// not split a UTF-8 sequence.
func CutUTF8Start(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	i := len(s) - n
	for j := i; j < len(s) && j < i+utf8.UTFMax; j++ {
		if utf8.RuneStart(s[j]) {
			return s[j:]
		}
	}
	if len(s)-i < utf8.UTFMax { // only the tail of a cut sequence
		return ""
	}
	return s[i:] // not UTF-8 here: cut at n
}
