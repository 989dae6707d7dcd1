package sqlitegorm_test

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	sqlite "github.com/llmtoolkit/llmtoolkit/internal/sqlitegorm"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// note is a host's model, migrated beside trace's table.
type note struct {
	ID        uint    `gorm:"primaryKey"`
	Title     string  `gorm:"not null;index"`
	Slug      string  `gorm:"uniqueIndex:note_slug"`
	Code      string  `gorm:"unique"`
	Status    string  `gorm:"not null;default:'draft'"`
	Label     string  `gorm:"default:none"`
	Priority  int     `gorm:"default:3;check:priority_range,priority >= 0"`
	Ratio     float64 `gorm:"default:1.5"`
	Pinned    bool    `gorm:"default:false"`
	CreatedAt time.Time
	DeletedAt gorm.DeletedAt
}

func (note) TableName() string { return "notes" }

// noteV2 is note with a column more.
type noteV2 struct {
	ID        uint    `gorm:"primaryKey"`
	Title     string  `gorm:"not null;index"`
	Slug      string  `gorm:"uniqueIndex:note_slug"`
	Code      string  `gorm:"unique"`
	Status    string  `gorm:"not null;default:'draft'"`
	Label     string  `gorm:"default:none"`
	Priority  int     `gorm:"default:3;check:priority_range,priority >= 0"`
	Ratio     float64 `gorm:"default:1.5"`
	Pinned    bool    `gorm:"default:false"`
	CreatedAt time.Time
	DeletedAt gorm.DeletedAt
	Author    string `gorm:"index"`
}

func (noteV2) TableName() string { return "notes" }

func TestAutoMigrateOnTraceDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "host.db")
	db, err := trace.OpenSQLite(path)
	require.NoError(t, err)
	require.NoError(t, trace.Migrate(db))

	m := db.Migrator()
	assert.Equal(t, "main", m.CurrentDatabase())
	assert.False(t, m.HasTable(&note{}))
	require.NoError(t, db.AutoMigrate(&note{}), "new table")
	require.NoError(t, db.AutoMigrate(&note{}), "existing table")
	assert.True(t, m.HasTable(&note{}))
	assert.True(t, m.HasTable("notes"))
	assert.True(t, m.HasColumn(&note{}, "Title"))
	assert.True(t, m.HasColumn(&note{}, "created_at"))
	assert.False(t, m.HasColumn(&note{}, "author"))
	assert.True(t, m.HasIndex(&note{}, "Title"))
	assert.True(t, m.HasIndex(&note{}, "note_slug"))
	assert.True(t, m.HasConstraint(&note{}, "priority_range"))
	assert.False(t, m.HasConstraint(&note{}, "no_such_constraint"))
	tables, err := m.GetTables()
	require.NoError(t, err)
	assert.Contains(t, tables, "notes")
	assert.Contains(t, tables, trace.DefaultTable)
	assert.NotContains(t, tables, "sqlite_sequence")

	cols, err := m.ColumnTypes(&note{})
	require.NoError(t, err)
	byName := map[string]gorm.ColumnType{}
	for _, c := range cols {
		byName[c.Name()] = c
	}
	require.Contains(t, byName, "status")
	nullable, ok := byName["status"].Nullable()
	assert.True(t, ok)
	assert.False(t, nullable)
	dv, ok := byName["status"].DefaultValue()
	assert.True(t, ok)
	assert.Equal(t, "draft", dv)
	pk, _ := byName["id"].PrimaryKey()
	assert.True(t, pk)

	n := note{Title: "first", Slug: "first", Code: "c1"}
	require.NoError(t, db.Create(&n).Error)
	assert.NotZero(t, n.ID)
	assert.Equal(t, "draft", n.Status, "defaults are filled back")
	assert.Equal(t, 3, n.Priority)
	var got note
	require.NoError(t, db.First(&got, n.ID).Error)
	assert.Equal(t, "first", got.Title)
	assert.Equal(t, "none", got.Label)
	assert.Equal(t, 1.5, got.Ratio)
	assert.Error(t, db.Create(&note{Title: "bad", Slug: "bad", Code: "c2", Priority: -1}).Error, "the check constraint holds")

	// The model grows a column: it is added, with its index; the rows stay.
	require.NoError(t, db.AutoMigrate(&noteV2{}))
	assert.True(t, m.HasColumn(&noteV2{}, "author"))
	assert.True(t, m.HasIndex(&noteV2{}, "Author"))
	require.NoError(t, db.AutoMigrate(&noteV2{}))
	var v2 noteV2
	require.NoError(t, db.First(&v2, n.ID).Error)
	assert.Equal(t, "first", v2.Title)

	require.NoError(t, m.DropIndex(&noteV2{}, "Author"))
	assert.False(t, m.HasIndex(&noteV2{}, "Author"))

	// Soft delete, and trace's own table still works beside.
	require.NoError(t, db.Delete(&got).Error)
	var count int64
	require.NoError(t, db.Model(&note{}).Count(&count).Error)
	assert.Zero(t, count)
}

// A column AutoMigrate would have to alter is reported, not changed.
func TestAutoMigrateAlterColumnRefused(t *testing.T) {
	db := open(t, ":memory:")
	type widget struct {
		ID   uint
		Size int
	}
	type widgetText struct {
		ID   uint
		Size string
	}
	require.NoError(t, db.Table("widgets").AutoMigrate(&widget{}))
	err := db.Table("widgets").AutoMigrate(&widgetText{})
	assert.ErrorIs(t, err, sqlite.ErrAlterColumn)
}

// A qualified table gets its indexes in its own schema.
func TestAutoMigrateQualifiedTable(t *testing.T) {
	db := open(t, filepath.Join(t.TempDir(), "q.db"))
	require.NoError(t, db.Table("main.notes").AutoMigrate(&note{}))
	require.NoError(t, db.Table("main.notes").AutoMigrate(&note{}))
	assert.True(t, db.Table("main.notes").Migrator().HasIndex(&note{}, "Title"))
}
