package trace

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSQLiteBoundedChoosesTheContext: a synchronous write on SQLite goes
// without the timeout's context only when the database bounds it: an
// unlimited pool and a busy timeout (OpenSQLite's 10 s) no longer than the
// write timeout.
func TestSQLiteBoundedChoosesTheContext(t *testing.T) {
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	defer sqlDB.Close()
	ctx := t.Context()
	assert.True(t, Record(nil, db).sqliteBounded(ctx), "busy timeout 10 s, write timeout 10 s")
	assert.True(t, Record(nil, db, WithWriteTimeout(time.Minute)).sqliteBounded(ctx))
	assert.False(t, Record(nil, db, WithWriteTimeout(time.Second)).sqliteBounded(ctx), "the write timeout is the shorter")
	sqlDB.SetMaxOpenConns(4)
	assert.False(t, Record(nil, db).sqliteBounded(ctx), "taking a connection can wait")
}
