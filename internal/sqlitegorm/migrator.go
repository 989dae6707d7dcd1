package sqlitegorm

import (
	"database/sql"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/migrator"
)

// Migrator is gorm's generic migrator with the queries that read
// information_schema replaced by SQLite's catalogue: sqlite_master and the
// table_info pragma, in the table's schema ("main", "temp" or an attached
// database) when its name is qualified.
type Migrator struct {
	migrator.Migrator
}

// ErrAlterColumn is returned when AutoMigrate or AlterColumn would change
// an existing column: SQLite cannot alter a column in place.
var ErrAlterColumn = errors.New("sqlitegorm: SQLite cannot alter an existing column")

// CurrentDatabase returns the name of the main database, "main".
func (m Migrator) CurrentDatabase() string {
	var name string
	if err := m.DB.Raw("SELECT name FROM pragma_database_list ORDER BY seq LIMIT 1").Row().Scan(&name); err != nil {
		return "main"
	}
	return name
}

// GetTables returns the names of the main database's tables, SQLite's own
// (sqlite_…) left out.
func (m Migrator) GetTables() ([]string, error) {
	var names []string
	err := m.DB.Raw(`SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`).Scan(&names).Error
	return names, err
}

// HasTable reports whether the table of value (a model or a table name,
// which may be qualified: "main.t") exists.
func (m Migrator) HasTable(value any) bool {
	var n int64
	_ = m.RunWithValue(value, func(stmt *gorm.Statement) error {
		schemaName, table := tableOf(stmt)
		return m.DB.Raw(`SELECT count(*) FROM `+m.catalogue(schemaName)+` WHERE type = 'table' AND name = ?`, table).Row().Scan(&n)
	})
	return n > 0
}

// HasColumn reports whether the table of value has the column of field (a
// field name or a column name).
func (m Migrator) HasColumn(value any, field string) bool {
	var n int64
	_ = m.RunWithValue(value, func(stmt *gorm.Statement) error {
		name := field
		if stmt.Schema != nil {
			if f := stmt.Schema.LookUpField(field); f != nil {
				name = f.DBName
			}
		}
		q, args := tableInfo(stmt)
		return m.DB.Raw(`SELECT count(*) FROM `+q+` WHERE name = ?`, append(args, name)...).Row().Scan(&n)
	})
	return n > 0
}

// ColumnTypes returns the columns of value's table as the table_info
// pragma describes them: declared type, nullability, default value (a
// string literal unquoted) and primary key.
func (m Migrator) ColumnTypes(value any) ([]gorm.ColumnType, error) {
	var cols []gorm.ColumnType
	err := m.RunWithValue(value, func(stmt *gorm.Statement) error {
		q, args := tableInfo(stmt)
		rows, err := m.DB.Raw(`SELECT name, type, "notnull", dflt_value, pk FROM `+q+` ORDER BY cid`, args...).Rows()
		if err != nil {
			return err
		}
		defer func() { _ = rows.Close() }()
		for rows.Next() {
			var (
				name, typ   string
				notNull, pk int64
				dflt        sql.NullString
			)
			if err := rows.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
				return err
			}
			if dflt.Valid && strings.EqualFold(dflt.String, "NULL") {
				dflt = sql.NullString{}
			}
			dflt.String = unquoteLiteral(dflt.String)
			cols = append(cols, migrator.ColumnType{
				NameValue:         sql.NullString{String: name, Valid: true},
				DataTypeValue:     sql.NullString{String: typ, Valid: true},
				ColumnTypeValue:   sql.NullString{String: typ, Valid: true},
				NullableValue:     sql.NullBool{Bool: notNull == 0, Valid: true},
				PrimaryKeyValue:   sql.NullBool{Bool: pk > 0, Valid: true},
				DefaultValueValue: dflt,
			})
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(cols) == 0 {
			return fmt.Errorf("sqlitegorm: no table %s", stmt.Table)
		}
		return nil
	})
	return cols, err
}

// AlterColumn returns an error wrapping [ErrAlterColumn]: SQLite cannot
// change a column's type, nullability or default. Rebuild the table, or
// add a new column.
func (m Migrator) AlterColumn(value any, field string) error {
	return m.RunWithValue(value, func(stmt *gorm.Statement) error {
		return fmt.Errorf("%w: column %s of table %s differs from the model", ErrAlterColumn, field, stmt.Table)
	})
}

// HasIndex reports whether the index name (an index of the model, by name
// or field, or an index name) exists on value's table.
func (m Migrator) HasIndex(value any, name string) bool {
	var n int64
	_ = m.RunWithValue(value, func(stmt *gorm.Statement) error {
		name = indexName(stmt, name)
		schemaName, table := tableOf(stmt)
		return m.DB.Raw(`SELECT count(*) FROM `+m.catalogue(schemaName)+` WHERE type = 'index' AND tbl_name = ? AND name = ?`, table, name).Row().Scan(&n)
	})
	return n > 0
}

// CreateIndex creates the model's index name, in the table's schema (SQLite
// qualifies the index, not the table, in CREATE INDEX).
func (m Migrator) CreateIndex(value any, name string) error {
	return m.RunWithValue(value, func(stmt *gorm.Statement) error {
		if stmt.Schema == nil {
			return fmt.Errorf("sqlitegorm: creating index %s: no model", name)
		}
		idx := stmt.Schema.LookIndex(name)
		if idx == nil {
			return fmt.Errorf("sqlitegorm: the model of table %s has no index %s", stmt.Table, name)
		}
		schemaName, table := tableOf(stmt)
		q := "CREATE "
		if idx.Class != "" {
			q += idx.Class + " "
		}
		q += "INDEX ? ON ??"
		if idx.Where != "" {
			q += " WHERE " + idx.Where
		}
		return m.DB.Exec(q, qualified(schemaName, idx.Name), clause.Table{Name: table}, m.BuildIndexOptions(idx.Fields, stmt)).Error
	})
}

// DropIndex drops the index name of value's table, if it exists.
func (m Migrator) DropIndex(value any, name string) error {
	return m.RunWithValue(value, func(stmt *gorm.Statement) error {
		schemaName, _ := tableOf(stmt)
		return m.DB.Exec("DROP INDEX IF EXISTS ?", qualified(schemaName, indexName(stmt, name))).Error
	})
}

// HasConstraint reports whether the CREATE TABLE statement of value's
// table names the constraint name (a check or foreign key constraint of
// the model, or a name): SQLite has no catalogue of constraints, and cannot
// add one to an existing table.
func (m Migrator) HasConstraint(value any, name string) bool {
	var found bool
	_ = m.RunWithValue(value, func(stmt *gorm.Statement) error {
		if c, _ := m.GuessConstraintInterfaceAndTable(stmt, name); c != nil {
			name = c.GetName()
		}
		schemaName, table := tableOf(stmt)
		var ddl sql.NullString
		err := m.DB.Raw(`SELECT sql FROM `+m.catalogue(schemaName)+` WHERE type = 'table' AND name = ?`, table).Row().Scan(&ddl)
		if err != nil {
			return err
		}
		re := regexp.MustCompile("(?i)\\bCONSTRAINT\\s+[`\"\\[]?" + regexp.QuoteMeta(name) + "[`\"\\]]?[\\s(]")
		found = re.MatchString(ddl.String)
		return nil
	})
	return found
}

// catalogue returns the sqlite_master table of the schema ("" for the main
// database).
func (m Migrator) catalogue(schemaName string) string {
	if schemaName == "" {
		return "sqlite_master"
	}
	var b strings.Builder
	m.Dialector.QuoteTo(&b, schemaName)
	return b.String() + ".sqlite_master"
}

// tableInfo returns the table_info pragma, as a table, of stmt's table and
// its arguments.
func tableInfo(stmt *gorm.Statement) (string, []any) {
	schemaName, table := tableOf(stmt)
	if schemaName == "" {
		return "pragma_table_info(?)", []any{table}
	}
	return "pragma_table_info(?, ?)", []any{table, schemaName}
}

// indexName returns the name of the model's index name (looked up by name
// or field), or name.
func indexName(stmt *gorm.Statement, name string) string {
	if stmt.Schema != nil {
		if idx := stmt.Schema.LookIndex(name); idx != nil {
			return idx.Name
		}
	}
	return name
}

// qualified returns the name in the schema, for quoting as one identifier
// per part.
func qualified(schemaName, name string) clause.Column {
	if schemaName == "" {
		return clause.Column{Name: name}
	}
	return clause.Column{Name: schemaName + "." + name}
}

// tableOf returns the schema ("" if unqualified) and name of stmt's table:
// a table named "main.t" with db.Table has Table "t" and the schema only in
// its quoted TableExpr; a table name given to the migrator is in Table as
// written.
func tableOf(stmt *gorm.Statement) (schemaName, table string) {
	if stmt.TableExpr != nil && len(stmt.TableExpr.Vars) == 0 {
		if parts := splitQuoted(stmt.TableExpr.SQL); len(parts) == 2 {
			return parts[0], parts[1]
		}
	}
	if s, t, ok := strings.Cut(stmt.Table, "."); ok {
		return s, t
	}
	return "", stmt.Table
}

// splitQuoted returns the parts of a dotted name quoted by QuoteTo
// (`a`.`b`), or nil if s is not one.
func splitQuoted(s string) []string {
	var parts []string
	for {
		if !strings.HasPrefix(s, "`") {
			return nil
		}
		var b strings.Builder
		i := 1
		for ; i < len(s); i++ {
			if s[i] != '`' {
				b.WriteByte(s[i])
				continue
			}
			if i+1 < len(s) && s[i+1] == '`' {
				b.WriteByte('`')
				i++
				continue
			}
			break
		}
		if i >= len(s) {
			return nil // unterminated
		}
		parts = append(parts, b.String())
		s = s[i+1:]
		if s == "" {
			return parts
		}
		if s[0] != '.' {
			return nil
		}
		s = s[1:]
	}
}

// unquoteLiteral returns the value of s if it is an SQL string literal
// (quoted with single quotes, a quote inside doubled), or s.
func unquoteLiteral(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}
