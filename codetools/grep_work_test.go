package codetools

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// grepCostlyAlternation is an n-branch alternation whose branches all
// start with "ab": a large program that every "abab…" line is a candidate
// for.
func grepCostlyAlternation(n int) string {
	alt := make([]string, n)
	for i := range alt {
		alt[i] = fmt.Sprintf("ab[a-z]*%d", i)
	}
	return strings.Join(alt, "|")
}

// TestGrepLongLineHonoursDeadline: a regular expression whose program is
// large runs over a long line (or many lines) in steps that check the
// call's deadline (issue 28, row 6: `\w{1000}c` on a 1 MiB line took 71 s
// with a 2 s deadline). Each call ends soon after its deadline with the
// deadline's error, never "No matches".
func TestGrepLongLineHonoursDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("deadlines measured in a child process: -short leaves it out (CI's race pass); the plain run has it")
	}
	inChild(t, 3*time.Minute, func(t *testing.T) {
		_, c := newTestTools(t)
		abab := func(n int) string { return strings.Repeat("ab", n/2) }
		writeTestFiles(t, c.Root(), map[string]string{
			"one-mib.txt":    abab(1<<20) + "\n",
			"nine-mib.txt":   abab(9<<20) + "\n", // longer than the largest block: streamed
			"many-lines.txt": strings.Repeat(abab(62)+"\n", 1<<16),
		})
		const deadline = 500 * time.Millisecond // each call runs minutes without one
		for _, tt := range []struct{ pattern, path string }{
			{`\w{1000}c`, "one-mib.txt"},
			{`[a-z]{300}c`, "one-mib.txt"},
			{`ab\w{1000}c`, "one-mib.txt"}, // a prefilter's candidate line
			{grepCostlyAlternation(3000), "nine-mib.txt"},
			{grepCostlyAlternation(3000), "one-mib.txt"},
			{grepCostlyAlternation(3000), "many-lines.txt"},
		} {
			out, took, err := callWithin(t, c, deadline, 20*time.Second, "grep", map[string]any{"pattern": tt.pattern, "path": tt.path})
			t.Logf("%.20s on %s: %v", tt.pattern, tt.path, took)
			require.Error(t, err, "%.20s on %s: %.200s", tt.pattern, tt.path, out)
			assert.ErrorIs(t, err, context.DeadlineExceeded)
			assert.NotContains(t, err.Error(), "No matches")
			assert.Less(t, took, deadline+2*time.Second, "%.20s on %s", tt.pattern, tt.path)
		}
	})
}

// TestGrepCostlyRunsFindWhatTheyShould: the runs that read their input
// through the checking reader find the same lines as a plain run.
func TestGrepCostlyRunsFindWhatTheyShould(t *testing.T) {
	t.Parallel()
	_, c := newTestTools(t)
	long := strings.Repeat("ab", 1<<13)
	writeTestFiles(t, c.Root(), map[string]string{
		"a.txt": "short line\n" + long + "c tail\nabx299 x\n" + long + "\n",
	})
	for _, tt := range []struct{ pattern, want string }{
		{`[a-z]{100}c`, ":2: "},
		{`ab\w{100}c`, ":2: "},
		{`\w{100}c t`, ":2: "},
		{grepCostlyAlternation(300), ":3: "},
	} {
		out := mustRun(t, c, "grep", map[string]any{"pattern": tt.pattern, "path": "a.txt"})
		assert.Contains(t, out, "a.txt"+tt.want, "%.20s", tt.pattern)
		assert.NotContains(t, out, ":1: ", "%.20s", tt.pattern)
		assert.Equal(t, 1, strings.Count(out, "\n")+1, "%.20s: one line", tt.pattern)
		assert.NotContains(t, out, ":4: ", "%.20s", tt.pattern)
	}
}
