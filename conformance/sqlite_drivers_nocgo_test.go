//go:build !cgo

package conformance_test

func sqlDrivers() []string { return []string{"sqlite"} }
