package trace

import (
	"errors"
	"fmt"
	"strings"

	sqlite "github.com/llmtoolkit/llmtoolkit/internal/sqlitegorm"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
)

// OpenSQLite opens (creating if needed) the SQLite database file at path
// with a pure-Go driver, so it works on a fresh machine with nothing
// installed: WAL journal, synchronous=NORMAL and a 10 s busy timeout, so
// that concurrent writers wait for each other instead of failing. It does
// not create the table: call [Migrate] once (it is idempotent). ":memory:"
// opens a private in-memory database on a single connection.
//
// gorm's own logging is silenced; errors are returned.
func OpenSQLite(path string) (*gorm.DB, error) {
	if path == "" {
		return nil, errors.New("trace: OpenSQLite needs a file path (or \":memory:\"), got \"\"")
	}
	if strings.ContainsRune(path, '?') {
		return nil, fmt.Errorf("trace: OpenSQLite: the path %q must not contain '?'", path)
	}
	dsn := path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := gorm.Open(sqlite.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, fmt.Errorf("trace: opening SQLite database %s: %w", path, err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fmt.Errorf("trace: opening SQLite database %s: %w", path, err)
	}
	if path == ":memory:" {
		sqlDB.SetMaxOpenConns(1) // every connection would see its own database
	}
	if err := sqlDB.Ping(); err != nil {
		_ = sqlDB.Close()
		return nil, fmt.Errorf("trace: opening SQLite database %s: %w", path, err)
	}
	return db, nil
}
