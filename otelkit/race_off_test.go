//go:build !race

package otelkit_test

const raceEnabled = false
