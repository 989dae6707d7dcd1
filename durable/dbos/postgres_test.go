package dbos

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// freshSchemaDSN creates a database of its own for the test on the server
// of dsn (a key=value DSN) and returns the DSN that names it; the database
// is dropped at the end of the test.
func freshSchemaDSN(t testing.TB, dsn string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, dsn)
	require.NoError(t, err, "connecting to LLMTOOLKIT_TEST_POSTGRES_DSN")
	defer conn.Close(ctx)
	name := fmt.Sprintf("llmtoolkit_dbos_%d", time.Now().UnixNano())
	_, err = conn.Exec(ctx, "CREATE DATABASE "+name)
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Logf("dropping %s: %v", name, err)
			return
		}
		defer conn.Close(ctx)
		if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Logf("dropping %s: %v", name, err)
		}
	})
	if strings.Contains(dsn, "://") {
		cfg, err := pgx.ParseConfig(dsn)
		require.NoError(t, err)
		return fmt.Sprintf("postgres://%s@%s:%d/%s?sslmode=disable", cfg.User, cfg.Host, cfg.Port, name)
	}
	return dsn + " dbname=" + name
}
