package codetools

import (
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

const (
	hintOldLines   = 20  // lines of oldText compared with the file
	hintMaxLines   = 30  // lines of the file shown
	hintLineBytes  = 200 // bytes of each line shown
	hintMinScore   = 0.3 // below it, nothing in the file looks like oldText
	hintMaxScanned = 200_000
)

// closestLines finds the lines of content that look most like oldText and
// returns them numbered, a few lines around, for a model to correct its
// oldText. It returns "" when nothing is similar enough.
func closestLines(content, oldText string) string {
	lines := diffLines(content)
	old := diffLines(strings.ReplaceAll(oldText, "\r\n", "\n"))
	type probe struct {
		at    int // line of oldText
		grams map[string]struct{}
	}
	var probes []probe
	for i, l := range old {
		if len(probes) == hintOldLines {
			break
		}
		if g := bigrams(l); len(g) > 0 {
			probes = append(probes, probe{i, g})
		}
	}
	if len(probes) == 0 {
		return ""
	}
	bestScore, bestLine, bestAt := 0.0, -1, 0
	for i, l := range lines[:min(len(lines), hintMaxScanned)] {
		g := bigrams(l)
		if len(g) == 0 {
			continue
		}
		for _, p := range probes {
			if s := dice(g, p.grams); s > bestScore {
				bestScore, bestLine, bestAt = s, i, p.at
			}
		}
	}
	if bestLine < 0 || bestScore < hintMinScore {
		return ""
	}
	start := max(bestLine-bestAt-2, 0)
	end := min(bestLine-bestAt+len(old)+2, len(lines), start+hintMaxLines)
	width := len(fmt.Sprint(end))
	var sb strings.Builder
	for i := start; i < end; i++ {
		l := lines[i]
		if len(l) > hintLineBytes {
			l = textutil.CutUTF8(l, hintLineBytes) + "…"
		}
		fmt.Fprintf(&sb, "%*d\t%s\n", width, i+1, l)
	}
	return strings.TrimSuffix(sb.String(), "\n")
}

// bigrams returns the pairs of runes of a line in the tolerant space,
// spaces collapsed.
func bigrams(line string) map[string]struct{} {
	t, _ := tolerantForm(strings.Join(strings.Fields(line), " "), false)
	r := []rune(t)
	if len(r) < 2 {
		if len(r) == 1 {
			return map[string]struct{}{t: {}}
		}
		return nil
	}
	g := make(map[string]struct{}, len(r))
	for i := 0; i+1 < len(r); i++ {
		g[string(r[i:i+2])] = struct{}{}
	}
	return g
}

// dice is the Sørensen–Dice similarity of two bigram sets.
func dice(a, b map[string]struct{}) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	common := 0
	for k := range a {
		if _, ok := b[k]; ok {
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(b))
}
