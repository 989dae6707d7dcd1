package trace_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestOpenPostgresRefusals: an empty connection string names the fix, and
// a server that cannot be reached is an error at once, which never shows
// the password, in either spelling of the connection string.
func TestOpenPostgresRefusals(t *testing.T) {
	_, err := trace.OpenPostgres("  ")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "needs a connection string")

	for name, dsn := range map[string]string{
		"keyword/value": "host=127.0.0.1 port=1 user=audit password=hunter2-XYZ dbname=audit sslmode=disable connect_timeout=2",
		"url":           "postgres://audit:hunter2-XYZ@127.0.0.1:1/audit?sslmode=disable&connect_timeout=2",
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			db, err := trace.OpenPostgres(dsn)
			require.Error(t, err)
			assert.Nil(t, db)
			assert.Less(t, time.Since(start), 15*time.Second)
			assert.Contains(t, err.Error(), "opening PostgreSQL database")
			assert.NotContains(t, err.Error(), "hunter2-XYZ")
		})
	}
}
