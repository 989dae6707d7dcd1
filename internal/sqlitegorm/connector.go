package sqlitegorm

import (
	"context"
	"database/sql/driver"

	"modernc.org/sqlite"
)

// drv is this package's own driver value: it is never registered under a
// name, and nothing registered on modernc.org/sqlite's package-level driver
// applies to it.
var drv = &sqlite.Driver{}

// connector opens connections to one DSN with drv, for sql.OpenDB.
type connector struct{ dsn string }

// Connect opens a connection. modernc.org/sqlite opens the database file
// (and applies the DSN's _pragma parameters) at once, so the context is
// only checked before.
func (c connector) Connect(ctx context.Context) (driver.Conn, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return drv.Open(c.dsn)
}

// Driver returns the driver value the connections come from.
func (connector) Driver() driver.Driver { return drv }
