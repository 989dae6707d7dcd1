//go:build amd64 && !purego

package search

import "golang.org/x/sys/cpu"

// grepHasAVX2 reports whether the probe can use AVX2: a fact of the
// machine, read once.
var grepHasAVX2 = cpu.X86.HasAVX2

// indexProbeAVX2 returns the first i below n (a multiple of 32) with
// s[i+o1]|m1 == b1 and s[i+o2]|m2 == b2, or -1. The caller makes sure that n-1+max(o1, o2)
// is below len(s).
//
//go:noescape
func indexProbeAVX2(s []byte, n, o1, o2 int, b1, b2, m1, m2 byte) int
