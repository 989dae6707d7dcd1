package trace

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestChunks(t *testing.T) {
	for _, tc := range []struct {
		n, per int
		pow2   bool
		want   []int
	}{
		{1, 500, true, []int{1}},
		{500, 500, true, []int{500}},
		{499, 500, true, []int{256, 128, 64, 32, 16, 2, 1}},
		{1001, 500, true, []int{500, 500, 1}},
		{1001, 500, false, []int{500, 500, 1}},
		{777, 500, false, []int{500, 277}},
		{6, 4, true, []int{4, 2}},
	} {
		got := chunks(tc.n, tc.per, tc.pow2)
		assert.Equal(t, tc.want, got, "chunks(%d, %d, %v)", tc.n, tc.per, tc.pow2)
		assert.Equal(t, len(got) == 1, oneChunk(tc.n, tc.per) || !tc.pow2 && tc.n <= tc.per, "oneChunk(%d, %d)", tc.n, tc.per)
	}
}

// TestSQLiteBatchStatementsAreFew: on SQLite, batches of every size are
// written (every row, none failed) with statements of a few row counts:
// a prepared statement per row count would hold megabytes each.
func TestSQLiteBatchStatementsAreFew(t *testing.T) {
	db, err := OpenSQLite(filepath.Join(t.TempDir(), "traces.db"))
	require.NoError(t, err)
	sqlDB, err := db.DB()
	require.NoError(t, err)
	defer sqlDB.Close()
	require.NoError(t, Migrate(db))
	rec := Record(nil, db)
	const tenant, conv = "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "0b1c2d3e-4f50-4617-8293-a4b5c6d7e8f9"
	var sizes []int
	for n := 1; n <= 70; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 255, 256, 257, 499, 500, 501, 999, 1234)
	total := 0
	for _, n := range sizes {
		batch := make([]*Trace, n)
		for i := range batch {
			tr, err := New(Attrs{TenantID: tenant, ConversationID: conv, ToolName: "echo", ResultType: ResultOK, Arguments: map[string]any{"i": i}, Result: map[string]any{"content": "x"}})
			require.NoError(t, err)
			batch[i] = tr
		}
		rec.flush(rec.table, batch)
		total += n
	}
	var rows int64
	require.NoError(t, db.Table("tool_traces").Count(&rows).Error)
	assert.Equal(t, int64(total), rows)
	assert.Zero(t, rec.Stats().Failed)
	statements := 0
	rec.inserts.m.Range(func(any, any) bool { statements++; return true })
	assert.LessOrEqual(t, statements, 10, "row counts 500, 256, 128, …, 1")
	assert.GreaterOrEqual(t, statements, 9)
}
