//go:build !amd64 || purego

package search

// grepHasAVX2 is false: this build has no assembly probe.
const grepHasAVX2 = false

func indexProbeAVX2(s []byte, n, o1, o2 int, b1, b2, m1, m2 byte) int { panic("unreachable") }
