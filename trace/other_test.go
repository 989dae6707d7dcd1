package trace_test

import (
	"gorm.io/gorm"
	"gorm.io/gorm/clause"
	"gorm.io/gorm/schema"
)

// otherDialector is a database trace does not support; it never connects.
type otherDialector struct{}

func (otherDialector) Name() string                                   { return "mysql" }
func (otherDialector) Initialize(*gorm.DB) error                      { return nil }
func (otherDialector) Migrator(*gorm.DB) gorm.Migrator                { return nil }
func (otherDialector) DataTypeOf(*schema.Field) string                { return "" }
func (otherDialector) DefaultValueOf(*schema.Field) clause.Expression { return nil }
func (otherDialector) BindVarTo(clause.Writer, *gorm.Statement, any)  {}
func (otherDialector) QuoteTo(clause.Writer, string)                  {}
func (otherDialector) Explain(string, ...any) string                  { return "" }
