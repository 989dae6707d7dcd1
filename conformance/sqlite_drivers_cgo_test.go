//go:build cgo && peers

package conformance_test

import _ "github.com/mattn/go-sqlite3" // registers "sqlite3"

func sqlDrivers() []string { return []string{"sqlite", "sqlite3"} }
