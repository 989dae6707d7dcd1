package trace

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"gorm.io/driver/postgres"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"

	"github.com/llmtoolkit/llmtoolkit/internal/redact"
)

// postgresPingTimeout bounds the first connection [OpenPostgres] makes.
const postgresPingTimeout = 10 * time.Second

// OpenPostgres opens the PostgreSQL database that dsn names, through the
// pure-Go pgx driver, for real deployments: dsn is a keyword/value string
// ("host=db.internal user=audit dbname=audit sslmode=verify-full") or a
// postgres:// URL, as libpq reads them. It connects once (within 10 s) so
// that a wrong address or password is an error here, not on the first row.
// It does not create the table: call [Migrate] once (it is idempotent), or
// [Migrate] with [WithTable] for each tenant's table.
//
// A password in dsn never appears in the error. gorm's own logging is
// silenced; errors are returned.
func OpenPostgres(dsn string) (*gorm.DB, error) {
	if strings.TrimSpace(dsn) == "" {
		return nil, errors.New(`trace: OpenPostgres needs a connection string, such as "host=localhost user=postgres dbname=audit sslmode=disable" or "postgres://user@host/audit", got ""`)
	}
	fail := func(err error) error {
		msg := redact.URLPasswords(err.Error(), "xxxxx")
		if pw := dsnPassword(dsn); pw != "" {
			msg = strings.ReplaceAll(msg, pw, "xxxxx")
		}
		return fmt.Errorf("trace: opening PostgreSQL database: %s", msg)
	}
	db, err := gorm.Open(postgres.Open(dsn), &gorm.Config{Logger: logger.Discard})
	if err != nil {
		return nil, fail(err)
	}
	sqlDB, err := db.DB()
	if err != nil {
		return nil, fail(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), postgresPingTimeout)
	defer cancel()
	if err := sqlDB.PingContext(ctx); err != nil {
		_ = sqlDB.Close()
		return nil, fail(err)
	}
	return db, nil
}

// dsnPassword returns the value of a keyword/value connection string's
// password, or "".
func dsnPassword(dsn string) string {
	for _, field := range strings.Fields(dsn) {
		if v, ok := strings.CutPrefix(field, "password="); ok {
			return strings.Trim(v, `'`)
		}
	}
	return ""
}
