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
