package sqlitegorm

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/callbacks"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/migrator"
	"gorm.io/gorm/schema"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Dialector is a gorm.Dialector for SQLite.
type Dialector struct {
	// DSN is modernc.org/sqlite's data source name. It is used when Conn
	// is nil.
	DSN string
	// Conn, when set, is the connection pool gorm uses instead of one
	// opened from DSN; it must reach SQLite through some driver.
	Conn gorm.ConnPool
}

// Open returns a dialector that opens dsn with modernc.org/sqlite.
func Open(dsn string) gorm.Dialector { return &Dialector{DSN: dsn} }

// New returns a dialector for d (a DSN or a connection pool).
func New(d Dialector) gorm.Dialector { return &d }

// Name returns "sqlite".
func (*Dialector) Name() string { return "sqlite" }

// Initialize sets db's connection pool (Conn, or a *sql.DB opened on DSN
// through this package's connector) and registers gorm's callbacks and the
// clause builders SQLite needs.
func (d *Dialector) Initialize(db *gorm.DB) error {
	returning := true
	if d.Conn != nil {
		db.ConnPool = d.Conn
		returning = supportsReturning(db)
	} else {
		db.ConnPool = sql.OpenDB(connector{dsn: d.DSN})
	}
	cfg := &callbacks.Config{
		CreateClauses: []string{"INSERT", "VALUES", "ON CONFLICT"},
		UpdateClauses: []string{"UPDATE", "SET", "FROM", "WHERE"},
		DeleteClauses: []string{"DELETE", "FROM", "WHERE"},
	}
	if returning {
		cfg.CreateClauses = append(cfg.CreateClauses, "RETURNING")
		cfg.UpdateClauses = append(cfg.UpdateClauses, "RETURNING")
		cfg.DeleteClauses = append(cfg.DeleteClauses, "RETURNING")
	}
	callbacks.RegisterDefaultCallbacks(db, cfg)
	db.ClauseBuilders["LIMIT"] = buildLimit
	db.ClauseBuilders["FOR"] = func(clause.Clause, clause.Builder) {} // SQLite locks the whole database: no row locks
	return nil
}

// supportsReturning reports whether the SQLite behind db's pool is 3.35 or
// later, the first with RETURNING.
func supportsReturning(db *gorm.DB) bool {
	var version string
	if err := db.ConnPool.QueryRowContext(context.Background(), "SELECT sqlite_version()").Scan(&version); err != nil {
		return false
	}
	parts := strings.SplitN(version, ".", 3)
	if len(parts) < 2 {
		return false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil {
		return false
	}
	return major > 3 || major == 3 && minor >= 35
}

// buildLimit writes LIMIT and OFFSET the way SQLite accepts them: an
// OFFSET needs a LIMIT, and -1 means none.
func buildLimit(c clause.Clause, b clause.Builder) {
	l, ok := c.Expression.(clause.Limit)
	if !ok {
		if c.Expression != nil {
			c.Expression.Build(b)
		}
		return
	}
	hasLimit := l.Limit != nil && *l.Limit >= 0
	if !hasLimit && l.Offset <= 0 {
		return
	}
	b.WriteString("LIMIT ")
	if hasLimit {
		b.AddVar(b, *l.Limit)
	} else {
		b.WriteString("-1")
	}
	if l.Offset > 0 {
		b.WriteString(" OFFSET ")
		b.AddVar(b, l.Offset)
	}
}

// Migrator returns a [Migrator] on db.
func (d *Dialector) Migrator(db *gorm.DB) gorm.Migrator {
	return Migrator{migrator.Migrator{Config: migrator.Config{
		DB:                          db,
		Dialector:                   d,
		CreateIndexAfterCreateTable: true, // SQLite has no INDEX clause in CREATE TABLE
	}}}
}

// DataTypeOf returns the SQLite column type for field: numeric for bool,
// integer for integers (integer PRIMARY KEY AUTOINCREMENT for the single,
// auto-incremented primary key), real, text, datetime and blob. A type
// gorm does not know is used as written.
func (*Dialector) DataTypeOf(field *schema.Field) string {
	switch field.DataType {
	case schema.Bool:
		return "numeric"
	case schema.Int, schema.Uint:
		if field.AutoIncrement && field.PrimaryKey && (field.Schema == nil || len(field.Schema.PrimaryFields) <= 1) {
			return "integer PRIMARY KEY AUTOINCREMENT"
		}
		return "integer"
	case schema.Float:
		return "real"
	case schema.String:
		return "text"
	case schema.Time:
		return "datetime"
	case schema.Bytes:
		return "blob"
	}
	return string(field.DataType)
}

// DefaultValueOf returns NULL: SQLite has no DEFAULT keyword among an
// INSERT's values, and NULL gives an auto-incremented key its next value.
func (*Dialector) DefaultValueOf(*schema.Field) clause.Expression {
	return clause.Expr{SQL: "NULL"}
}

// BindVarTo writes SQLite's positional parameter, '?'.
func (*Dialector) BindVarTo(w clause.Writer, _ *gorm.Statement, _ any) {
	_ = w.WriteByte('?')
}

// QuoteTo writes str as an identifier quoted with backquotes, each
// dot-separated part on its own ("main.t" is `main`.`t`); a backquote in a
// name is doubled.
func (*Dialector) QuoteTo(w clause.Writer, str string) {
	for i, part := range strings.Split(str, ".") {
		if i > 0 {
			_ = w.WriteByte('.')
		}
		_ = w.WriteByte('`')
		_, _ = w.WriteString(strings.ReplaceAll(part, "`", "``"))
		_ = w.WriteByte('`')
	}
}

// Explain returns sql with vars written in as SQL literals, for logs and
// dry runs.
func (*Dialector) Explain(sql string, vars ...any) string {
	return logger.ExplainSQL(sql, nil, `'`, vars...)
}

// SavePoint creates the savepoint name in tx's transaction.
func (d *Dialector) SavePoint(tx *gorm.DB, name string) error {
	return tx.Exec("SAVEPOINT " + quote(d, name)).Error
}

// RollbackTo rolls tx's transaction back to the savepoint name.
func (d *Dialector) RollbackTo(tx *gorm.DB, name string) error {
	return tx.Exec("ROLLBACK TO SAVEPOINT " + quote(d, name)).Error
}

// quote returns name quoted by d.
func quote(d *Dialector, name string) string {
	var b strings.Builder
	d.QuoteTo(&b, name)
	return b.String()
}

// Translate maps SQLite's constraint errors to gorm's (with
// gorm.Config.TranslateError): a duplicate unique or primary key to
// gorm.ErrDuplicatedKey, a foreign key to gorm.ErrForeignKeyViolated. The
// driver's error stays in the chain.
func (*Dialector) Translate(err error) error {
	var e *sqlite.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code() {
	case sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY:
		return fmt.Errorf("%w: %w", gorm.ErrDuplicatedKey, err)
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fmt.Errorf("%w: %w", gorm.ErrForeignKeyViolated, err)
	}
	return err
}

var (
	_ gorm.Dialector                     = (*Dialector)(nil)
	_ gorm.SavePointerDialectorInterface = (*Dialector)(nil)
	_ gorm.ErrorTranslator               = (*Dialector)(nil)
)
