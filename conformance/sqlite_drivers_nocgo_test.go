//go:build !cgo || !peers

package conformance_test

func sqlDrivers() []string { return []string{"sqlite"} }
