package textedit

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/stretchr/testify/assert"
)

// fillerLines returns n lines unlike the test's targets, with line at
// (0-based) replaced by insert when it is not empty.
func fillerLines(n, at int, insert string) string {
	var sb strings.Builder
	for i := range n {
		if i == at && insert != "" {
			sb.WriteString(insert)
			continue
		}
		fmt.Fprintf(&sb, "x := %d\n", i)
	}
	return sb.String()
}

func TestClosestLinesBounded(t *testing.T) {
	t.Parallel()
	const target = "func uniqueTarget(alpha, beta int) error {\n\treturn combine(alpha, beta)\n}\n"
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name, content, oldText string
		ctx                    context.Context
		want                   []string // in the hint, in order
		exact                  string   // the whole hint, when set
	}{
		{
			name:    "small file, whole",
			content: fillerLines(100, 50, target),
			oldText: "func uniqueTarget(alpha, beta int) error {\n\treturn combin(alpha, beta)\n}",
			want:    []string{"\nThe closest lines in the file are:\n", "51\tfunc uniqueTarget(alpha, beta int) error {"},
		},
		{
			name:    "large file, window on the oldText",
			content: fillerLines(300_000, 250_000, target),
			oldText: "func uniqueTarget(alpha, beta int) error {\n\treturn combin(alpha, beta)\n}",
			want:    []string{"\nThe closest lines in lines ", " of the file are:\n", "250001\tfunc uniqueTarget(alpha, beta int) error {"},
		},
		{
			name:    "large file, nothing similar in the window",
			content: fillerLines(300_000, -1, ""),
			oldText: "completely different words without digits",
			exact:   "\nNothing in lines 1 to 200000 of the file looks like oldText; the rest of the file was not compared.",
		},
		{
			name:    "long lines compared by their start",
			content: "short\n" + strings.Repeat("abcdefgh", 2000) + "\nshort\n",
			oldText: strings.Repeat("abcdefgh", 40) + "X",
			want:    []string{"\nThe closest lines in the file are:\n", "2\tabcdefgh", "…"},
		},
		{
			name:    "huge oldText skipped",
			content: "a\nb\n",
			oldText: strings.Repeat("a\n", hintMaxOldBytes/2+1),
			exact:   "\nNo closest lines are shown for an oldText of 1.0MB (the hint compares at most 1.0MB); to replace most of a file, use write_file.",
		},
		{
			name:    "nothing similar in a small file",
			content: fillerLines(10, -1, ""),
			oldText: "completely different words without digits",
			exact:   "",
		},
		{
			name:    "context ended",
			content: fillerLines(100, 50, target),
			oldText: "func uniqueTarget(alpha, beta int) error {",
			ctx:     cancelled,
			exact:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			got := ClosestLines(ctx, tt.content, tt.oldText)
			if tt.want == nil {
				assert.Equal(t, tt.exact, got)
				return
			}
			rest := got
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if !assert.GreaterOrEqual(t, i, 0, "%q not in\n%s", w, got) {
					return
				}
				rest = rest[i+len(w):]
			}
			assert.LessOrEqual(t, strings.Count(got, "\n"), hintMaxLines+1)
		})
	}
}

// FuzzClosestLines checks the bounded hint against the first
// implementation where the bounds do not apply: small files, lines within
// hintCompareBytes.
func FuzzClosestLines(f *testing.F) {
	f.Add("func a() {\n\treturn 1\n}\n", "func a() {\n\treturn 2\n}")
	f.Add("x\ny\nz\n", "y")
	f.Add("“quoted” text\n\u00a0spaced  out\n", "\"quoted\" text")
	f.Add("\ufeffa b c\r\nd e f\r\n", "d e g")
	f.Fuzz(func(t *testing.T, content, oldText string) {
		if !utf8.ValidString(content) || !utf8.ValidString(oldText) || len(content) > 4<<10 || len(oldText) > 4<<10 {
			return
		}
		for l := range strings.Lines(content + "\n" + oldText) {
			if len(l) > hintCompareBytes {
				return
			}
		}
		got := ClosestLines(context.Background(), content, oldText)
		want := referenceClosestLines(content, oldText)
		if want != "" {
			want = "\nThe closest lines in the file are:\n" + want
		}
		if got != want {
			t.Fatalf("ClosestLines(%q, %q)\n got %q\nwant %q", content, oldText, got, want)
		}
	})
}

// referenceClosestLines is the first implementation of the hint, with
// bigram sets as maps and no bound but the number of lines.
func referenceClosestLines(content, oldText string) string {
	lines := diffLines(content)
	old := diffLines(strings.ReplaceAll(oldText, "\r\n", "\n"))
	type probe struct {
		at    int
		grams map[string]struct{}
	}
	var probes []probe
	for i, l := range old {
		if len(probes) == hintOldLines {
			break
		}
		if g := referenceBigrams(l); len(g) > 0 {
			probes = append(probes, probe{i, g})
		}
	}
	if len(probes) == 0 {
		return ""
	}
	bestScore, bestLine, bestAt := 0.0, -1, 0
	for i, l := range lines[:min(len(lines), hintMaxScanned)] {
		g := referenceBigrams(l)
		if len(g) == 0 {
			continue
		}
		for _, p := range probes {
			common := 0
			for k := range g {
				if _, ok := p.grams[k]; ok {
					common++
				}
			}
			if s := 2 * float64(common) / float64(len(g)+len(p.grams)); s > bestScore {
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

func referenceBigrams(line string) map[string]struct{} {
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
