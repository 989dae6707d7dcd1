package textedit

import (
	"context"
	"fmt"
	"iter"
	"math/bits"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// The closest-lines hint of a failed edit. Its work is bounded whatever the
// sizes: it compares the first hintOldLines lines of oldText with at most
// hintMaxScanned lines (hintMaxCompared bytes) of the file, each line cut
// to hintCompareBytes, and skips an oldText over hintMaxOldBytes. Memory is
// a fixed index plus one line's grams at a time.
const (
	hintOldLines     = 20      // lines of oldText compared with the file (at most 32: one bit each)
	hintMaxLines     = 30      // lines of the file shown
	hintLineBytes    = 200     // bytes of each line shown
	hintMinScore     = 0.3     // below it, nothing in the file looks like oldText
	hintMaxScanned   = 200_000 // lines of the file compared
	hintMaxCompared  = 4 << 20 // bytes of the file compared
	hintCompareBytes = 256     // bytes of each line compared
	hintMaxOldBytes  = 1 << 20 // a larger oldText gets no hint
	hintCheckEvery   = 4096    // lines between two checks of the context
	hintAnchors      = 3       // longest lines of oldText looked for to place the window
	hintMinAnchor    = 8       // bytes of a line looked for
)

// ClosestLines finds the lines of content that look most like oldText and
// returns them numbered, a few lines around, for a model to correct its
// oldText: the text to add to the error message, starting with a newline,
// or "" when nothing is similar enough or ctx ended. When the hint is
// skipped or compared only part of the file, the text says so.
func ClosestLines(ctx context.Context, content, oldText string) string {
	if len(oldText) > hintMaxOldBytes {
		return fmt.Sprintf("\nNo closest lines are shown for an oldText of %s (the hint compares at most %s); to replace most of a file, use write_file.",
			textutil.HumanSize(int64(len(oldText))), textutil.HumanSize(hintMaxOldBytes))
	}
	idx := newGramIndex(oldText)
	if idx == nil {
		return ""
	}
	content = strings.TrimPrefix(content, utf8BOM)
	from, firstLine := hintWindow(content, idx)
	var (
		grams            []gram
		form             []byte
		common           = make([]int, len(idx.sizes))
		bestScore        = 0.0
		bestLine, bestAt = -1, 0
		scanned          = 0
		compared         = 0
		whole            = from == 0
	)
	for i, l := range textLines(content[from:]) {
		if i == hintMaxScanned || compared >= hintMaxCompared {
			whole = false
			break
		}
		if i%hintCheckEvery == 0 && ctx.Err() != nil {
			return ""
		}
		scanned++
		compared += min(len(l), hintCompareBytes) + 1
		form, grams = lineGrams(form, grams, l)
		if len(grams) == 0 {
			continue
		}
		clear(common)
		for _, g := range grams {
			for m := idx.probes(g); m != 0; m &= m - 1 {
				common[bits.TrailingZeros32(m)]++
			}
		}
		for p, n := range common {
			if s := 2 * float64(n) / float64(len(grams)+idx.sizes[p]); s > bestScore {
				bestScore, bestLine, bestAt = s, firstLine+i, idx.at[p]
			}
		}
	}
	part := "the file"
	if !whole {
		part = fmt.Sprintf("lines %d to %d of the file", firstLine+1, firstLine+scanned)
	}
	if bestLine < 0 || bestScore < hintMinScore {
		if !whole {
			return fmt.Sprintf("\nNothing in %s looks like oldText; the rest of the file was not compared.", part)
		}
		return ""
	}
	oldLines := 0
	if old := strings.TrimSuffix(strings.TrimPrefix(oldText, utf8BOM), "\n"); old != "" {
		oldLines = strings.Count(old, "\n") + 1
	}
	start := max(bestLine-bestAt-2, firstLine)
	end := min(bestLine-bestAt+oldLines+2, start+hintMaxLines)
	var shown []string
	for i, l := range textLines(content[from:]) {
		i += firstLine
		if i >= end {
			break
		}
		if i >= start {
			shown = append(shown, l)
		}
	}
	width := len(fmt.Sprint(start + len(shown)))
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nThe closest lines in %s are:", part)
	for k, l := range shown {
		if len(l) > hintLineBytes {
			l = textutil.CutUTF8(l, hintLineBytes) + "…"
		}
		fmt.Fprintf(&sb, "\n%*d\t%s", width, start+k+1, l)
	}
	return sb.String()
}

// hintWindow returns where the lines the hint compares start: the start
// of the text when it is small enough to compare whole, else a line start
// before the first exact occurrence of one of oldText's longest lines (the
// window is centred on it), else the start. firstLine is the number of
// lines before it.
func hintWindow(content string, idx *gramIndex) (from, firstLine int) {
	if len(content) <= hintMaxCompared && strings.Count(content, "\n") < hintMaxScanned {
		return 0, 0
	}
	at := -1
	for _, l := range idx.anchors {
		if at = strings.Index(content, l); at >= 0 {
			break
		}
	}
	if at < 0 {
		return 0, 0
	}
	from = strings.LastIndexByte(content[:at], '\n') + 1
	for k := 0; k < hintMaxScanned/2 && from > 0 && at-from < hintMaxCompared/2; k++ {
		from = strings.LastIndexByte(content[:from-1], '\n') + 1
	}
	return from, strings.Count(content[:from], "\n")
}

// textLines yields the lines of a text as a diff splits them (see
// diffLines, without the byte order mark), numbered from 0, without
// splitting the whole text at once.
func textLines(s string) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		s := strings.TrimSuffix(s, "\n")
		if s == "" {
			return
		}
		for i := 0; ; i++ {
			line, rest, more := strings.Cut(s, "\n")
			if !yield(i, strings.TrimSuffix(line, "\r")) || !more {
				return
			}
			s = rest
		}
	}
}

// gram is a pair of neighbouring runes of a line, or the only rune of a
// one-rune line (its second half all ones).
type gram uint64

func makeGram(a, b rune) gram { return gram(uint64(uint32(a))<<32 | uint64(uint32(b))) }

// gramIndex tells, for each gram, which probes (lines of oldText) hold it.
type gramIndex struct {
	ascii   [128 * 128]uint32 // grams of two ASCII runes: one bit per probe
	other   map[gram]uint32   // the other grams
	sizes   []int             // distinct grams of each probe
	at      []int             // line of oldText of each probe
	anchors []string          // the longest probes, trimmed, longest first
}

// newGramIndex indexes the first hintOldLines lines of oldText that have
// grams, or returns nil when none has.
func newGramIndex(oldText string) *gramIndex {
	idx := &gramIndex{other: map[gram]uint32{}}
	var (
		grams []gram
		form  []byte
	)
	for i, l := range textLines(strings.TrimPrefix(oldText, utf8BOM)) {
		if len(idx.sizes) == hintOldLines {
			break
		}
		form, grams = lineGrams(form, grams, l)
		if len(grams) == 0 {
			continue
		}
		bit := uint32(1) << len(idx.sizes)
		for _, g := range grams {
			if a, b := uint64(g>>32), uint64(uint32(g)); a < utf8.RuneSelf && b < utf8.RuneSelf {
				idx.ascii[a<<7|b] |= bit
			} else {
				idx.other[g] |= bit
			}
		}
		idx.sizes = append(idx.sizes, len(grams))
		idx.at = append(idx.at, i)
		if l = strings.TrimSpace(textutil.CutUTF8(l, hintCompareBytes)); len(l) >= hintMinAnchor {
			idx.anchors = append(idx.anchors, l)
		}
	}
	if len(idx.sizes) == 0 {
		return nil
	}
	slices.SortStableFunc(idx.anchors, func(a, b string) int { return len(b) - len(a) })
	idx.anchors = idx.anchors[:min(len(idx.anchors), hintAnchors)]
	return idx
}

// probes returns the set of probes that hold g, one bit each.
func (idx *gramIndex) probes(g gram) uint32 {
	if a, b := uint64(g>>32), uint64(uint32(g)); a < utf8.RuneSelf && b < utf8.RuneSelf {
		return idx.ascii[a<<7|b]
	}
	return idx.other[g]
}

// lineGrams returns the distinct grams of the first hintCompareBytes bytes
// of a line in the tolerant space, its whitespace runs as single spaces
// and its ends trimmed, reusing the buffers form and grams.
func lineGrams(form []byte, grams []gram, line string) ([]byte, []gram) {
	form = hintForm(form[:0], textutil.CutUTF8(line, hintCompareBytes))
	grams = grams[:0]
	prev, n := rune(-1), 0
	for i := 0; i < len(form); {
		r, size := utf8.DecodeRune(form[i:])
		i += size
		if n > 0 {
			grams = append(grams, makeGram(prev, r))
		}
		prev = r
		n++
	}
	if n == 1 {
		grams = append(grams, makeGram(prev, -1))
	}
	slices.Sort(grams)
	return form, slices.Compact(grams)
}

// hintForm appends to dst the line in the tolerant space with its
// whitespace runs as single spaces and its ends trimmed.
func hintForm(dst []byte, line string) []byte {
	for i := 0; i < len(line); i++ {
		if line[i] >= utf8.RuneSelf {
			t, _ := tolerantForm(strings.Join(strings.Fields(line), " "), false)
			return append(dst, t...)
		}
	}
	space := false
	for i := 0; i < len(line); i++ {
		switch c := line[i]; c {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			space = len(dst) > 0
		default:
			if space {
				dst = append(dst, ' ')
				space = false
			}
			dst = append(dst, c)
		}
	}
	return dst
}
