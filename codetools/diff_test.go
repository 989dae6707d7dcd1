package codetools

import (
	"fmt"
	"strings"
	"testing"

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
	before := strings.Join(numbered(500), "\n")
	got, _ := compactDiff(before, "", 3, 10)
	assert.Equal(t, 11, strings.Count(got, "\n")+1)
	assert.Contains(t, got, "(490 more diff lines)")
}

func TestMyersMinimal(t *testing.T) {
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
