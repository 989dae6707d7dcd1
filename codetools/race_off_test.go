//go:build !race

package codetools

// raceEnabled: see race_on_test.go.
const raceEnabled = false
