//go:build race

package codetools

// raceEnabled: the race detector multiplies memory (its shadow memory) and
// time, so the tests that bound them check their limits only without it;
// the plain `go test` run in CI checks them.
const raceEnabled = true
