//go:build !amd64 || purego

package search

// grepHasAVX2 is false: this build has no assembly probe.
const grepHasAVX2 = false

func indexProbeAVX2(s []byte, n, o1, o2 int, pat uint64) int { panic("unreachable") }
