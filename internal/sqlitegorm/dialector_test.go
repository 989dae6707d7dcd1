package sqlitegorm_test

import (
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"
	"gorm.io/gorm/logger"
	"gorm.io/gorm/schema"

	sqlite "github.com/llmtoolkit/llmtoolkit/internal/sqlitegorm"
)

const pragmas = "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"

// open opens dsn with the dialector, gorm's logging silenced.
func open(t *testing.T, dsn string, cfg ...*gorm.Config) *gorm.DB {
	t.Helper()
	c := &gorm.Config{Logger: logger.Discard}
	if len(cfg) > 0 {
		c = cfg[0]
		c.Logger = logger.Discard
	}
	db, err := gorm.Open(sqlite.Open(dsn), c)
	require.NoError(t, err)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	if strings.HasPrefix(dsn, ":memory:") {
		sqlDB.SetMaxOpenConns(1)
	}
	t.Cleanup(func() { _ = sqlDB.Close() })
	return db
}

type item struct {
	ID      uint `gorm:"primaryKey"`
	Name    string
	Done    bool
	Score   float64
	Count   int64
	Payload []byte
	At      time.Time
}

func TestFileDatabaseWithPragmas(t *testing.T) {
	path := filepath.Join(t.TempDir(), "test.db")
	db := open(t, path+pragmas)
	assert.Equal(t, "sqlite", db.Dialector.Name())

	var mode string
	require.NoError(t, db.Raw("PRAGMA journal_mode").Scan(&mode).Error)
	assert.Equal(t, "wal", mode)
	var timeout, sync int
	require.NoError(t, db.Raw("PRAGMA busy_timeout").Scan(&timeout).Error)
	assert.Equal(t, 10000, timeout)
	require.NoError(t, db.Raw("PRAGMA synchronous").Scan(&sync).Error)
	assert.Equal(t, 1, sync) // NORMAL

	require.NoError(t, db.AutoMigrate(&item{}))
	at := time.Date(2026, 11, 26, 9, 30, 0, 123456789, time.UTC)
	in := []item{
		{Name: "a", Done: true, Score: 1.5, Count: -3, Payload: []byte{0, 1, 2}, At: at},
		{Name: "it's", At: at.Add(time.Hour)},
	}
	require.NoError(t, db.Create(&in).Error)
	assert.NotZero(t, in[0].ID, "auto-increment ids are filled back")
	assert.Equal(t, in[0].ID+1, in[1].ID)

	var out []item
	require.NoError(t, db.Order("id").Find(&out).Error)
	require.Len(t, out, 2)
	for i := range in {
		assert.True(t, in[i].At.Equal(out[i].At), "time %v, read back %v", in[i].At, out[i].At)
		out[i].At = in[i].At
	}
	assert.Equal(t, in, out)

	// An OFFSET without a LIMIT, and a single row.
	var rest []item
	require.NoError(t, db.Order("id").Offset(1).Find(&rest).Error)
	require.Len(t, rest, 1)
	assert.Equal(t, "it's", rest[0].Name)
	var one item
	require.NoError(t, db.Where("name = ?", "a").First(&one).Error)
	assert.Equal(t, in[0].ID, one.ID)

	// Another connection to the file sees the rows.
	other := open(t, path+pragmas)
	var n int64
	require.NoError(t, other.Model(&item{}).Count(&n).Error)
	assert.EqualValues(t, 2, n)
}

func TestMemoryDatabase(t *testing.T) {
	db := open(t, ":memory:"+pragmas)
	require.NoError(t, db.AutoMigrate(&item{}))
	require.NoError(t, db.Create(&item{Name: "m"}).Error)
	var got item
	require.NoError(t, db.First(&got).Error)
	assert.Equal(t, "m", got.Name)
	assert.EqualValues(t, 1, got.ID)
}

func TestQuoteDottedName(t *testing.T) {
	db := open(t, ":memory:")
	var b strings.Builder
	db.Dialector.QuoteTo(&b, "main.tool_traces")
	assert.Equal(t, "`main`.`tool_traces`", b.String())
	b.Reset()
	db.Dialector.QuoteTo(&b, "odd`name")
	assert.Equal(t, "`odd``name`", b.String())

	require.NoError(t, db.Table("main.things").AutoMigrate(&item{}))
	assert.True(t, db.Migrator().HasTable("main.things"))
	assert.True(t, db.Migrator().HasTable("things"))
	require.NoError(t, db.Table("main.things").Create(&item{Name: "q"}).Error)
	var got []item
	require.NoError(t, db.Table("main.things").Find(&got).Error)
	require.Len(t, got, 1)
	assert.Equal(t, "q", got[0].Name)

	stmt := db.Session(&gorm.Session{DryRun: true}).Table("main.things").Where("name = ?", "x").Find(&[]item{}).Statement
	assert.Contains(t, stmt.SQL.String(), "FROM `main`.`things` WHERE name = ?")
}

func TestDataTypes(t *testing.T) {
	db := open(t, ":memory:")
	s, err := schema.Parse(&item{}, &sync.Map{}, db.NamingStrategy)
	require.NoError(t, err)
	want := map[string]string{
		"id":      "integer PRIMARY KEY AUTOINCREMENT",
		"name":    "text",
		"done":    "numeric",
		"score":   "real",
		"count":   "integer",
		"payload": "blob",
		"at":      "datetime",
	}
	for col, typ := range want {
		assert.Equal(t, typ, db.Dialector.DataTypeOf(s.LookUpField(col)), col)
	}
	assert.Equal(t, "SELECT * FROM t WHERE a = 'it''s' AND b = 3", db.Dialector.Explain("SELECT * FROM t WHERE a = ? AND b = ?", "it's", 3))
}

func TestDuplicateKeyTranslated(t *testing.T) {
	db := open(t, ":memory:", &gorm.Config{TranslateError: true})
	require.NoError(t, db.AutoMigrate(&item{}))
	require.NoError(t, db.Create(&item{ID: 7}).Error)
	err := db.Create(&item{ID: 7}).Error
	require.Error(t, err)
	assert.ErrorIs(t, err, gorm.ErrDuplicatedKey)
}

func TestSavePoints(t *testing.T) {
	db := open(t, ":memory:")
	require.NoError(t, db.AutoMigrate(&item{}))
	err := db.Transaction(func(tx *gorm.DB) error {
		require.NoError(t, tx.Create(&item{Name: "kept"}).Error)
		nested := tx.Transaction(func(tx2 *gorm.DB) error {
			require.NoError(t, tx2.Create(&item{Name: "dropped"}).Error)
			return assert.AnError
		})
		assert.ErrorIs(t, nested, assert.AnError)
		return nil
	})
	require.NoError(t, err)
	var names []string
	require.NoError(t, db.Model(&item{}).Pluck("name", &names).Error)
	assert.Equal(t, []string{"kept"}, names)
}

// A connection pool given as Conn is used as it is.
func TestGivenConnPool(t *testing.T) {
	first := open(t, filepath.Join(t.TempDir(), "pool.db")+pragmas)
	sqlDB, err := first.DB()
	require.NoError(t, err)
	db, err := gorm.Open(sqlite.New(sqlite.Dialector{Conn: sqlDB}), &gorm.Config{Logger: logger.Discard})
	require.NoError(t, err)
	require.NoError(t, db.AutoMigrate(&item{}))
	in := item{Name: "pooled"}
	require.NoError(t, db.Create(&in).Error)
	assert.NotZero(t, in.ID)
	var got item
	require.NoError(t, first.First(&got, in.ID).Error)
	assert.Equal(t, "pooled", got.Name)
}
