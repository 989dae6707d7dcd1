package textedit

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func numbered(n int) []string {
	lines := make([]string, n)
	for i := range lines {
		lines[i] = fmt.Sprintf("line %d", i+1)
	}
	return lines
}

func TestCompactDiffOneChange(t *testing.T) {
	t.Parallel()
	lines := numbered(20)
	before := strings.Join(lines, "\n") + "\n"
	lines[9] = "changed"
	after := strings.Join(lines, "\n") + "\n"
	got, first := compactDiff(before, after, 2, 100)
	assert.Equal(t, 10, first)
	assert.Equal(t, strings.Join([]string{
		"  8 line 8",
		"  9 line 9",
		"-10 line 10",
		"+10 changed",
		" 11 line 11",
		" 12 line 12",
	}, "\n"), got)
}

func TestCompactDiffTwoDistantChanges(t *testing.T) {
	t.Parallel()
	lines := numbered(100)
	before := strings.Join(lines, "\n")
	lines[4] = "five"
	lines = append(lines[:80], append([]string{"inserted"}, lines[80:]...)...)
	after := strings.Join(lines, "\n")
	got, first := compactDiff(before, after, 1, 100)
	assert.Equal(t, 5, first)
	t.Log("\n" + got)
	assert.Contains(t, got, "-  5 line 5\n+  5 five\n")
	assert.Contains(t, got, "+ 81 inserted\n")
	assert.Contains(t, got, "...")
	assert.NotContains(t, got, "line 40")
}

func TestCompactDiffCapsLines(t *testing.T) {
	t.Parallel()
	before := strings.Join(numbered(500), "\n")
	got, _ := compactDiff(before, "", 3, 10)
	assert.Equal(t, 11, strings.Count(got, "\n")+1)
	assert.Contains(t, got, "(490 more diff lines)")
}

func TestMyersMinimal(t *testing.T) {
	t.Parallel()
	a := strings.Split("a b c a b b a", " ")
	b := strings.Split("c b a b a c", " ")
	script, ok := myers(a, b)
	require.True(t, ok)
	edits := strings.Count(string(script), "-") + strings.Count(string(script), "+")
	assert.Equal(t, 5, edits, "the classic example has a 5-edit script")
	// Replaying the script turns a into b.
	var out []string
	i, j := 0, 0
	for _, k := range script {
		switch k {
		case ' ':
			require.Equal(t, a[i], b[j])
			out = append(out, a[i])
			i++
			j++
		case '-':
			i++
		case '+':
			out = append(out, b[j])
			j++
		}
	}
	assert.Equal(t, b, out)
}

func TestCompactDiffWindow(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ before, after, want string }{
		{"x", "yx", "-1 x\n+1 yx"},
		{"x\n", "y\nx\n", "+1 y\n 2 x"},
		{"a\nb\nc\n", "a\nB\nc\n", " 1 a\n-2 b\n+2 B\n 3 c"},
		{"a\nb", "a\nbc", " 1 a\n-2 b\n+2 bc"},
		{"a\n", "", "-1 a"},
	} {
		got, _ := compactDiff(tt.before, tt.after, 1, 100)
		assert.Equal(t, tt.want, got, "%q -> %q", tt.before, tt.after)
	}
}

// FuzzCompactDiff checks that the diff's lines replay before into after.
func FuzzCompactDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n")
	f.Add("x", "yx")
	f.Fuzz(func(t *testing.T, before, after string) {
		if strings.ContainsAny(before+after, "\r") || strings.HasPrefix(before, utf8BOM) || strings.HasPrefix(after, utf8BOM) {
			return
		}
		diff, _ := compactDiff(before, after, 1<<20, 1<<20)
		if diff == "" || strings.HasPrefix(diff, "(") {
			return
		}
		// With unlimited context the diff holds every line: the context and
		// added lines are after's lines.
		var got []string
		for _, l := range strings.Split(diff, "\n") {
			if l == "" || l[0] == '-' || strings.TrimSpace(l) == "..." {
				continue
			}
			_, text, _ := strings.Cut(strings.TrimLeft(l[1:], " "), " ")
			got = append(got, text)
		}
		want := diffLines(after)
		for i := range want {
			if len(want[i]) > maxDiffLineBytes {
				return
			}
		}
		if len(want) == 0 {
			want = nil
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Fatalf("diff %q does not rebuild %q", diff, after)
		}
	})
}

func TestUnifiedDiff(t *testing.T) {
	t.Parallel()
	hundred := strings.Join(numbered(100), "\n") + "\n"
	for _, tt := range []struct {
		name, before, after, want string
	}{
		{"one change", "a\nb\nc\n", "a\nB\nc\n", "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c"},
		{"insert into empty", "", "x\ny\n", "@@ -0,0 +1,2 @@\n+x\n+y"},
		{"delete all", "x\n", "", "@@ -1 +0,0 @@\n-x"},
		{"append", "a\n", "a\nb\n", "@@ -1 +1,2 @@\n a\n+b"},
		{"two hunks", hundred, strings.Replace(strings.Replace(hundred, "line 5\n", "five\n", 1), "line 90\n", "ninety\n", 1),
			"@@ -2,7 +2,7 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n" +
				"@@ -87,7 +87,7 @@\n line 87\n line 88\n line 89\n-line 90\n+ninety\n line 91\n line 92\n line 93"},
		{"near changes share a hunk", hundred, strings.Replace(strings.Replace(hundred, "line 5\n", "five\n", 1), "line 11\n", "eleven\n", 1),
			"@@ -2,13 +2,13 @@\n line 2\n line 3\n line 4\n-line 5\n+five\n line 6\n line 7\n line 8\n line 9\n line 10\n-line 11\n+eleven\n line 12\n line 13\n line 14"},
		{"only line endings", "a\nb\n", "a\r\nb\r\n", eolNote},
		{"only the final newline", "a\nb\n", "a\nb", eolNote},
		{"nothing", "a\n", "a\n", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, truncated := NewDiff(tt.before, tt.after, 3).Unified("f.txt", 3, 64<<10)
			assert.False(t, truncated)
			if strings.HasPrefix(tt.want, "@@") {
				tt.want = "--- a/f.txt\n+++ b/f.txt\n" + tt.want
			}
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestUnifiedDiffCapped(t *testing.T) {
	t.Parallel()
	before := strings.Repeat("the same old line of text\n", 20_000)
	after := strings.ReplaceAll(before, "old", "new")
	long := strings.Repeat("é", 100_000) // one line longer than the cap
	for _, tt := range []struct{ name, before, after string }{
		{"many lines", before, after},
		{"one long line", long + "\n", long + "x\n"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			d := NewDiff(tt.before, tt.after, 3)
			got, truncated := d.Unified("f.txt", 3, 64<<10)
			assert.True(t, truncated)
			assert.LessOrEqual(t, len(got), 64<<10)
			assert.Greater(t, len(got), 64<<10-600, "the cap is used, not much less")
			assert.True(t, strings.HasSuffix(got, "\n... (diff cut at 64 KiB)"), got[len(got)-100:])
			assert.True(t, utf8.ValidString(got), "cut at a character boundary")
		})
	}
	d := NewDiff(before, after, 3)
	removed, added, bounded := d.Counts()
	assert.Equal(t, 20_000, added)
	assert.Equal(t, 20_000, removed)
	assert.False(t, bounded)
	assert.Equal(t, 1, d.FirstChanged())
}

// FuzzUnifiedDiff checks that the unified diff, applied to before, gives
// after, and that it is never longer than its cap.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", "a\nB\nc\n", 3)
	f.Add("", "x\n", 0)
	f.Add("1\n2\n3\n4\n5\n6\n7\n8\n9\n", "1\n2\nX\n4\n5\n6\n7\nY\n9\n", 1)
	f.Fuzz(func(t *testing.T, before, after string, context int) {
		context = min(max(context, 0), 5)
		d := NewDiff(before, after, context)
		capped, _ := d.Unified("f", context, 1024)
		if len(capped) > 1024 {
			t.Fatalf("%d bytes, past the cap of 1024", len(capped))
		}
		diff, truncated := d.Unified("f", context, 1<<30)
		if truncated {
			t.Fatal("cut without a reason")
		}
		if diff == "" || diff == eolNote {
			if strings.Join(diffLines(before), "\n") != strings.Join(diffLines(after), "\n") {
				t.Fatalf("no hunks for different lines: %q", diff)
			}
			return
		}
		got, err := applyUnified(diffLines(before), diff)
		if err != nil {
			t.Fatalf("%v in\n%s", err, diff)
		}
		if want := diffLines(after); strings.Join(got, "\n") != strings.Join(want, "\n") || len(got) != len(want) {
			t.Fatalf("the diff gives %q, want %q:\n%s", got, want, diff)
		}
	})
}

// applyUnified applies a unified diff to lines, checking every context
// and removed line and the counts of each hunk header.
func applyUnified(lines []string, diff string) ([]string, error) {
	rows := strings.Split(diff, "\n")
	if len(rows) < 2 || !strings.HasPrefix(rows[0], "--- a/") || !strings.HasPrefix(rows[1], "+++ b/") {
		return nil, fmt.Errorf("no header")
	}
	var out []string
	at := 0 // next line of lines to copy
	for i := 2; i < len(rows); {
		var as, al, bs, bl int
		h := rows[i]
		if _, err := fmt.Sscanf(hunkHeader(h), "@@ -%d,%d +%d,%d @@", &as, &al, &bs, &bl); err != nil {
			return nil, fmt.Errorf("bad hunk header %q: %w", h, err)
		}
		if al > 0 {
			as--
		}
		if as < at || as > len(lines) {
			return nil, fmt.Errorf("hunk %q out of order", h)
		}
		out = append(out, lines[at:as]...)
		at = as
		if bl > 0 && bs-1 != len(out) || bl == 0 && bs != len(out) {
			return nil, fmt.Errorf("hunk %q starts at %d of after, not %d", h, bs, len(out)+1)
		}
		na, nb := 0, 0
		for i++; i < len(rows) && !strings.HasPrefix(rows[i], "@@"); i++ {
			r := rows[i]
			if r == "" {
				return nil, fmt.Errorf("empty row")
			}
			switch r[0] {
			case ' ', '-':
				if at >= len(lines) || lines[at] != r[1:] {
					return nil, fmt.Errorf("row %q does not match line %d", r, at+1)
				}
				if r[0] == ' ' {
					out = append(out, r[1:])
					nb++
				}
				at++
				na++
			case '+':
				out = append(out, r[1:])
				nb++
			default:
				return nil, fmt.Errorf("bad row %q", r)
			}
		}
		if na != al || nb != bl {
			return nil, fmt.Errorf("hunk %q has %d and %d lines", h, na, nb)
		}
	}
	return append(out, lines[at:]...), nil
}

// hunkHeader writes the counts a header leaves out (they are 1).
func hunkHeader(h string) string {
	fields := strings.Fields(h)
	for i, f := range fields[1:3] {
		if !strings.Contains(f, ",") {
			fields[i+1] = f + ",1"
		}
	}
	return strings.Join(fields, " ")
}

// TestDiffCountsMinimalPastTheEditBound: past the 2,000 edits the shown
// diff gives up on, the counts are still those of diff -u.
func TestDiffCountsMinimalPastTheEditBound(t *testing.T) {
	t.Parallel()
	var before, after strings.Builder
	for i := range 2400 {
		fmt.Fprintf(&before, "line %d\n", i)
		if i%2 == 0 {
			fmt.Fprintf(&after, "changed %d\n", i)
		} else {
			fmt.Fprintf(&after, "line %d\n", i)
		}
	}
	removed, added, bounded := NewDiff(before.String(), after.String(), 3).Counts()
	assert.Equal(t, 1200, added)
	assert.Equal(t, 1200, removed)
	assert.False(t, bounded)

	r, a, ok := minimalCounts([]string{"a", "b", "c", "d"}, []string{"b", "x", "d", "e"}, 1000)
	assert.True(t, ok)
	assert.Equal(t, [2]int{2, 2}, [2]int{r, a})
	_, _, ok = minimalCounts(strings.Split(strings.Repeat("a\nb\n", 5000), "\n"), strings.Split(strings.Repeat("b\nc\n", 5000), "\n"), 1000)
	assert.False(t, ok, "past the work bound")
}
