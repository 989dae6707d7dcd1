package trace_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

func TestInsertOnly(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		orig, err := trace.New(validAttrs())
		require.NoError(t, err)
		require.NoError(t, db.Create(orig).Error)

		hooked := []struct {
			name string
			run  func() error
		}{
			{"Save loaded row", func() error {
				var tr trace.Trace
				require.NoError(t, db.First(&tr, "id = ?", orig.ID).Error)
				tr.ToolName = "changed"
				return db.Save(&tr).Error
			}},
			{"Model(row).Update", func() error {
				return db.Model(&trace.Trace{ID: orig.ID}).Update("tool_name", "changed").Error
			}},
			{"Model(&Trace{}).Where.Update", func() error {
				return db.Model(&trace.Trace{}).Where("id = ?", orig.ID).Update("tool_name", "changed").Error
			}},
			{"Model(&Trace{}).Where.Updates map", func() error {
				return db.Model(&trace.Trace{}).Where("1 = 1").Updates(map[string]any{"iteration": 9}).Error
			}},
			{"Delete loaded row", func() error {
				var tr trace.Trace
				require.NoError(t, db.First(&tr, "id = ?", orig.ID).Error)
				return db.Delete(&tr).Error
			}},
			{"Where.Delete(&Trace{})", func() error {
				return db.Where("id = ?", orig.ID).Delete(&trace.Trace{}).Error
			}},
			{"Delete by primary key", func() error {
				return db.Delete(&trace.Trace{}, "id = ?", orig.ID).Error
			}},
			{"AllowGlobalUpdate Delete", func() error {
				return db.Session(&gorm.Session{AllowGlobalUpdate: true}).Delete(&trace.Trace{}).Error
			}},
		}
		for _, h := range hooked {
			assert.ErrorIs(t, h.run(), trace.ErrImmutable, h.name)
		}

		// What bypasses gorm's hooks meets the database's triggers.
		raw := []struct {
			name string
			run  func() error
		}{
			{"SkipHooks update", func() error {
				return db.Session(&gorm.Session{SkipHooks: true}).Model(&trace.Trace{}).
					Where("id = ?", orig.ID).Update("tool_name", "changed").Error
			}},
			{"SkipHooks delete", func() error {
				return db.Session(&gorm.Session{SkipHooks: true}).Where("id = ?", orig.ID).Delete(&trace.Trace{}).Error
			}},
			{"Table(...).Updates", func() error {
				return db.Table("tool_traces").Where("id = ?", orig.ID).Updates(map[string]any{"iteration": 7}).Error
			}},
			{"UpdateColumn (skips hooks)", func() error {
				return db.Model(&trace.Trace{}).Where("id = ?", orig.ID).UpdateColumn("iteration", 9).Error
			}},
			{"raw UPDATE", func() error { return db.Exec("UPDATE tool_traces SET iteration = 5").Error }},
			{"raw DELETE", func() error { return db.Exec("DELETE FROM tool_traces").Error }},
		}
		if db.Dialector.Name() == "postgres" {
			raw = append(raw, struct {
				name string
				run  func() error
			}{"TRUNCATE", func() error { return db.Exec("TRUNCATE tool_traces").Error }})
		}
		for _, r := range raw {
			err := r.run()
			require.Error(t, err, r.name)
			assert.Contains(t, err.Error(), "insert-only", r.name)
		}

		got, err := trace.List(t.Context(), db, trace.Filter{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, *orig, got[0], "the row is unchanged")
	})
}

func TestMigrate(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		require.NoError(t, trace.Migrate(db), "Migrate is idempotent")
		var names []string
		if db.Dialector.Name() == "postgres" {
			require.NoError(t, db.Raw(`SELECT indexname FROM pg_indexes
				WHERE tablename = 'tool_traces' AND schemaname = current_schema() ORDER BY indexname`).Scan(&names).Error)
		} else {
			require.NoError(t, db.Raw(`SELECT name FROM sqlite_master
				WHERE type = 'index' AND tbl_name = 'tool_traces' AND sql IS NOT NULL ORDER BY name`).Scan(&names).Error)
		}
		assert.Contains(t, names, "tool_traces_tenant_id_conversation_id_inserted_at_index")
		assert.Contains(t, names, "tool_traces_tool_name_index")

		// The database's own checks back New's.
		err := db.Exec(`INSERT INTO tool_traces (id, tenant_id, conversation_id, tool_name, result_type, duration_ms, iteration, inserted_at)
			VALUES ('6a1f4b2c-0000-4000-8000-000000000001', ?, ?, 'x', 'maybe', 0, 0, ?)`, tenant, convA, "2025-01-01 00:00:00").Error
		assert.Error(t, err)
	})
}

func TestMigrateRefusesOtherDatabases(t *testing.T) {
	assert.Error(t, trace.Migrate(nil))
	db, err := gorm.Open(otherDialector{}, &gorm.Config{})
	require.NoError(t, err)
	assert.ErrorIs(t, trace.Migrate(db), trace.ErrUnsupportedDatabase)
}
