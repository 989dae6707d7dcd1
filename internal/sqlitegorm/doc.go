// Package sqlitegorm is a gorm dialector for SQLite on the pure-Go
// modernc.org/sqlite driver, opened through a connector rather than by
// driver name. It is github.com/glebarez/sqlite v1.11.0 (MIT, see LICENSE)
// with its driver, github.com/glebarez/go-sqlite, replaced by
// modernc.org/sqlite: glebarez/go-sqlite registers the driver name "sqlite"
// that modernc.org/sqlite registers too, so a program that linked both
// panicked at start-up ("sql: Register called twice for driver sqlite").
package sqlitegorm
