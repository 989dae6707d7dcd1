// Package sqlitegorm is the project's own gorm dialector for SQLite on the
// pure-Go driver modernc.org/sqlite.
//
// It exists so that trace can use SQLite without taking the driver name
// "sqlite" from the program that links it. The database is opened through
// a [driver.Connector] of this package that calls the Open method of a
// private modernc.org/sqlite Driver value, never with sql.Open("sqlite", …)
// and never with sql.Register: a program that also imports
// modernc.org/sqlite (which registers "sqlite") or mattn/go-sqlite3
// ("sqlite3") starts and works beside it. Functions, collations and hooks
// registered on modernc.org/sqlite's package-level driver do not apply to
// the connections opened here.
//
// The DSN is modernc.org/sqlite's: a file name (or ":memory:", or a
// "file:" URI) with its query parameters, such as
// "traces.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)".
//
// The dialector covers what trace and a host's AutoMigrate need: SQLite's
// column types, identifiers quoted with backquotes part by part
// ("main.tool_traces" is `main`.`tool_traces`), RETURNING (SQLite 3.35 and
// later) so that generated keys are filled back, savepoints, and a
// [Migrator] that reads SQLite's catalogue (sqlite_master and the
// table_info pragma) instead of information_schema. SQLite cannot alter a
// column's type, nullability or default in place: AutoMigrate adds missing
// columns and indexes, and reports a column it would have to alter.
package sqlitegorm
