package patch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// ErrNoMatch is wrapped by the error for a hunk whose context or anchor is
// not in the file.
var ErrNoMatch = errors.New("context not found")

// HunkError is the error for the hunk of a file that could not be applied.
type HunkError struct {
	Path string // the file as the patch names it
	Hunk int    // 1-based
	Line int    // the patch line where the hunk starts (0 when unknown)
	Err  error
}

// Error names the file, the hunk and its line.
func (e *HunkError) Error() string {
	where := fmt.Sprintf("%s, hunk %d", e.Path, e.Hunk)
	if e.Line > 0 {
		where += fmt.Sprintf(" (patch line %d)", e.Line)
	}
	return where + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *HunkError) Unwrap() error { return e.Err }

const bom = "\uFEFF"

// Fuzz levels, as the reference appliers count them.
const (
	fuzzExact   = 0
	fuzzTrimEnd = 1   // lines equal once trailing whitespace is dropped
	fuzzTrim    = 100 // lines equal once surrounding whitespace is dropped
	fuzzEOF     = 10000
)

// ApplyHunks applies an update's hunks to content and returns the new text.
//
// The file's line ending is kept: "\r\n" when every line break of the
// file is one, else "\n" (a file of mixed endings is matched as it is, its
// "\r"s part of the lines, which the tolerant levels below forgive). A
// UTF-8 BOM is kept and never part of a line.
//
// Each hunk is sought from where the previous one ended (the cursor):
// its anchors first, each the next line equal to it (exact, then with
// surrounding whitespace dropped; an anchor that already occurred above
// the cursor leaves it where it is, as the reference does), then its
// context (its ' ' and '-' lines) as the first run of lines equal to it
// at or after the cursor, trying exact equality over the rest of the file
// first, then equality of lines without trailing whitespace, then without
// surrounding whitespace. A hunk marked "*** End of File" is sought at the
// end of the file first. This is the matching of the reference appliers
// (openai/codex's apply-patch, the Agents SDK's applyDiff): the first
// match wins, so a context that occurs twice picks the first after the
// cursor; an "@@" anchor is how a patch picks another. Removed lines are
// the file's own (as matched), added lines the patch's.
//
// An anchor that occurs nowhere in the file fails (codex refuses it; the
// Agents SDK ignores a lone one), as does context that is not found and
// hunks that overlap. The error is a *HunkError naming the hunk.
func ApplyHunks(ctx context.Context, path, content string, hunks []Hunk) (string, error) {
	hasBOM := strings.HasPrefix(content, bom)
	content = strings.TrimPrefix(content, bom)
	eol := lineEnding(content)
	if eol == "\r\n" {
		content = strings.ReplaceAll(content, "\r\n", "\n")
	}
	f := newFile(strings.Split(content, "\n"))
	type chunk struct {
		at       int // index of the first line replaced
		del      int // lines removed
		ins      []string
		hunk     int
		hunkLine int
	}
	var chunks []chunk
	cursor := 0
	for hi, h := range hunks {
		if hi&63 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		fail := func(err error) error { return &HunkError{Path: path, Hunk: hi + 1, Line: h.Line, Err: err} }
		if h.Markers == 0 && cursor != 0 {
			return "", fail(fmt.Errorf("%w: the hunk has no \"@@\" line", ErrSyntax))
		}
		for ai, a := range h.Anchors {
			next, ok := f.anchor(a, cursor, ai > 0)
			if !ok {
				return "", fail(fmt.Errorf("%w: no line of the file is the anchor %q", ErrNoMatch, clip(a)))
			}
			cursor = next
		}
		var context []string
		var hc []chunk
		var del int
		var ins []string
		flush := func() {
			if del > 0 || len(ins) > 0 {
				hc = append(hc, chunk{at: len(context) - del, del: del, ins: ins})
			}
			del, ins = 0, nil
		}
		last := byte(' ')
		for _, l := range h.Lines {
			if l.Op == ' ' && last != ' ' {
				flush()
			}
			last = l.Op
			switch l.Op {
			case '-':
				del++
				context = append(context, l.Text)
			case '+':
				ins = append(ins, l.Text)
			default:
				context = append(context, l.Text)
			}
		}
		flush()
		at, _ := f.find(context, cursor, h.EOF)
		if at < 0 {
			where := fmt.Sprintf("after line %d", cursor)
			if h.EOF {
				where = "at the end of the file or " + where
			}
			return "", fail(fmt.Errorf("%w %s; the hunk's context and removed lines:\n%s", ErrNoMatch, where, clipLines(context)))
		}
		for _, c := range hc {
			c.at += at
			c.hunk, c.hunkLine = hi+1, h.Line
			chunks = append(chunks, c)
		}
		cursor = at + len(context)
	}
	lines := f.lines
	var out []string
	pos := 0
	for _, c := range chunks {
		if c.at > len(lines) || c.at < pos {
			return "", &HunkError{Path: path, Hunk: c.hunk, Line: c.hunkLine, Err: fmt.Errorf("%w: the hunk overlaps the previous one", ErrNoMatch)}
		}
		out = append(out, lines[pos:c.at]...)
		out = append(out, c.ins...)
		pos = c.at + c.del
	}
	out = append(out, lines[pos:]...)
	s := strings.Join(out, eol)
	if hasBOM {
		s = bom + s
	}
	return s, nil
}

// lineEnding is "\r\n" when every "\n" of s follows a "\r" (and there is
// one), else "\n".
func lineEnding(s string) string {
	n := strings.Count(s, "\n")
	if n > 0 && n == strings.Count(s, "\r\n") {
		return "\r\n"
	}
	return "\n"
}

// file is the lines of a file and, made when first needed, their tolerant
// forms.
type file struct {
	lines            []string
	trimEnd, trimAll []string
}

func newFile(lines []string) *file { return &file{lines: lines} }

func (f *file) level(fuzz int) []string {
	switch fuzz {
	case fuzzTrimEnd:
		if f.trimEnd == nil {
			f.trimEnd = mapLines(f.lines, trimEnd)
		}
		return f.trimEnd
	case fuzzTrim:
		if f.trimAll == nil {
			f.trimAll = mapLines(f.lines, trim)
		}
		return f.trimAll
	}
	return f.lines
}

func mapLines(lines []string, fn func(string) string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fn(l)
	}
	return out
}

// isSpace is JavaScript's whitespace (String.prototype.trim), which the
// reference appliers trim: Unicode spaces, line terminators and U+FEFF.
func isSpace(r rune) bool {
	switch r {
	case '\u0085':
		return false
	case '\uFEFF':
		return true
	}
	return unicode.IsSpace(r)
}

func trimEnd(s string) string { return strings.TrimRightFunc(s, isSpace) }
func trim(s string) string    { return strings.TrimFunc(s, isSpace) }

// anchor moves the cursor past the next line equal to a (exact, then
// trimmed). Unless forward, an occurrence above the cursor leaves the
// cursor where it is. It reports false when the file has no such line.
func (f *file) anchor(a string, cursor int, forward bool) (int, bool) {
	for _, fuzz := range []int{fuzzExact, fuzzTrim} {
		lines, want := f.level(fuzz), a
		if fuzz == fuzzTrim {
			want = trim(a)
		}
		if !forward {
			for _, l := range lines[:cursor] {
				if l == want {
					return cursor, true
				}
			}
		}
		for i := cursor; i < len(lines); i++ {
			if lines[i] == want {
				return i + 1, true
			}
		}
	}
	return cursor, false
}

// find returns the first index at or after start where context occurs,
// and the fuzz it took, or -1.
func (f *file) find(context []string, start int, eof bool) (int, int) {
	if eof {
		n := len(f.lines)
		if n > 1 && f.lines[n-1] == "" {
			n-- // the empty "line" after a final newline
		}
		if at, fuzz := f.findFrom(context, max(0, n-len(context)), n); at >= 0 {
			return at, fuzz
		}
		at, fuzz := f.findFrom(context, min(start, n), n)
		return at, fuzz + fuzzEOF
	}
	return f.findFrom(context, start, len(f.lines))
}

// findFrom seeks context in lines [start, n).
func (f *file) findFrom(context []string, start, n int) (int, int) {
	if len(context) == 0 {
		return start, fuzzExact
	}
	for _, fuzz := range []int{fuzzExact, fuzzTrimEnd, fuzzTrim} {
		lines := f.level(fuzz)[:n]
		want := context
		switch fuzz {
		case fuzzTrimEnd:
			want = mapLines(context, trimEnd)
		case fuzzTrim:
			want = mapLines(context, trim)
		}
		for i := start; i+len(want) <= len(lines); i++ {
			if lines[i] != want[0] {
				continue
			}
			if equal(lines[i+1:i+len(want)], want[1:]) {
				return i, fuzz
			}
		}
	}
	return -1, 0
}

func equal(a, b []string) bool {
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// clipLines shows the first lines of a context in an error.
func clipLines(lines []string) string {
	const n = 8
	var b strings.Builder
	for i, l := range lines {
		if i == n {
			fmt.Fprintf(&b, "  … (%d more lines)\n", len(lines)-n)
			break
		}
		b.WriteString("  " + clip(l) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}
