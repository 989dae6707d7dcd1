package patch

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bigPatch is a file of n lines and an update patch of hunks hunks, spread
// evenly, each with three lines of context around one changed line.
func bigPatch(n, hunks int) (content, patch string) {
	var c, p strings.Builder
	for i := range n {
		fmt.Fprintf(&c, "\tline %d of the file: x := compute(%d)\n", i, i%97)
	}
	p.WriteString("*** Begin Patch\n*** Update File: big.go\n")
	step := n / hunks
	for h := range hunks {
		at := h*step + step/2
		p.WriteString("@@\n")
		for i := at - 3; i < at; i++ {
			fmt.Fprintf(&p, " \tline %d of the file: x := compute(%d)\n", i, i%97)
		}
		fmt.Fprintf(&p, "-\tline %d of the file: x := compute(%d)\n", at, at%97)
		fmt.Fprintf(&p, "+\tline %d changed\n", at)
		for i := at + 1; i < at+4; i++ {
			fmt.Fprintf(&p, " \tline %d of the file: x := compute(%d)\n", i, i%97)
		}
	}
	p.WriteString("*** End Patch\n")
	return c.String(), p.String()
}

// BenchmarkApply1000Hunks applies a 1,000-hunk patch to a 50,000-line
// file: parse, plan in memory and the atomic write.
func BenchmarkApply1000Hunks(b *testing.B) {
	content, patch := bigPatch(50_000, 1_000)
	files, dir, _ := newRoot(b)
	path := filepath.Join(dir, "big.go")
	b.ReportAllocs()
	b.SetBytes(int64(len(content)))
	for b.Loop() {
		b.StopTimer()
		require.NoError(b, os.WriteFile(path, []byte(content), 0o644))
		b.StartTimer()
		ops, err := Parse(patch)
		if err != nil {
			b.Fatal(err)
		}
		changes, err := Apply(context.Background(), files, ops)
		if err != nil {
			b.Fatal(err)
		}
		if changes[0].Hunks != 1_000 {
			b.Fatal(changes[0].Hunks)
		}
	}
}

func TestBigPatchApplies(t *testing.T) {
	content, patch := bigPatch(5_000, 100)
	ops, err := Parse(patch)
	require.NoError(t, err)
	got, err := ApplyHunks(context.Background(), "big.go", content, ops[0].Hunks)
	require.NoError(t, err)
	require.Equal(t, 100, strings.Count(got, "changed\n"))
	require.Equal(t, strings.Count(content, "\n"), strings.Count(got, "\n"))
}
