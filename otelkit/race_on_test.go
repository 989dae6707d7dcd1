//go:build race

package otelkit_test

// raceEnabled: the race detector changes what allocates (sync.Pool drops
// items at random under it), so allocation counts are checked only without
// it; the plain `go test` run in CI checks them.
const raceEnabled = true
