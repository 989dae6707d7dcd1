package lsp

import (
	"fmt"
	"sort"
	"strings"
)

// ApplyEdits applies edits (byte columns) to text. Overlapping edits, or
// a position past the text, are an error and nothing is applied.
func ApplyEdits(text string, edits []TextEdit) (string, error) {
	starts := lineStarts(text)
	offset := func(p Position) (int, error) {
		if p.Line < 0 || p.Line >= len(starts) || p.Character < 0 {
			return 0, fmt.Errorf("position %d:%d is outside the file", p.Line+1, p.Character+1)
		}
		end := len(text)
		if p.Line+1 < len(starts) {
			end = starts[p.Line+1] - 1 // the line's \n
		}
		o := starts[p.Line] + p.Character
		if o > end {
			return 0, fmt.Errorf("position %d:%d is past the end of its line", p.Line+1, p.Character+1)
		}
		return o, nil
	}
	type span struct {
		from, to int
		text     string
	}
	spans := make([]span, 0, len(edits))
	for _, e := range edits {
		from, err := offset(e.Range.Start)
		if err != nil {
			return "", err
		}
		to, err := offset(e.Range.End)
		if err != nil {
			return "", err
		}
		if to < from {
			return "", fmt.Errorf("an edit ends before it starts")
		}
		spans = append(spans, span{from, to, e.NewText})
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	var b strings.Builder
	last := 0
	for _, s := range spans {
		if s.from < last {
			return "", fmt.Errorf("edits overlap")
		}
		b.WriteString(text[last:s.from])
		b.WriteString(s.text)
		last = s.to
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// lineStarts returns the byte offset of each line's start.
func lineStarts(text string) []int {
	starts := []int{0}
	for i := 0; i < len(text); i++ {
		if text[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}
