package trace_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// twoHandles returns two handles on one database, as two replicas have:
// the same SQLite file opened twice, or two pools on one PostgreSQL
// schema; both migrated with opts.
func twoHandles(t *testing.T, dialect string, opts ...trace.Option) (a, b *gorm.DB) {
	t.Helper()
	open := func(t *testing.T, o func() (*gorm.DB, error)) *gorm.DB {
		db, err := o()
		require.NoError(t, err)
		t.Cleanup(func() {
			if sqlDB, err := db.DB(); err == nil {
				_ = sqlDB.Close()
			}
		})
		return db
	}
	switch dialect {
	case "sqlite":
		path := filepath.Join(t.TempDir(), "traces.db")
		a = open(t, func() (*gorm.DB, error) { return trace.OpenSQLite(path) })
		b = open(t, func() (*gorm.DB, error) { return trace.OpenSQLite(path) })
	default:
		a = openPostgres(t)
		var schema string
		require.NoError(t, a.Raw(`SELECT current_schema()`).Scan(&schema).Error)
		b = open(t, func() (*gorm.DB, error) {
			return trace.OpenPostgres(os.Getenv(postgresDSNVar) + " search_path=" + schema)
		})
	}
	require.NoError(t, trace.Migrate(a, opts...))
	require.NoError(t, trace.Migrate(b, opts...))
	return a, b
}

// TestSharedSecretsAcrossReplicas: with WithSharedSecrets, a secret given
// to one Recorder (a sensitive argument) is scrubbed from a later row of
// the same conversation written by another Recorder on its own handle of
// the database, on SQLite and PostgreSQL; without it, it is not (the
// hole the option closes); the database never holds the secret in
// clear; a Recorder with another key does not write a row it cannot
// scrub (counted as failed); another conversation does not see it.
func TestSharedSecretsAcrossReplicas(t *testing.T) {
	const secret = "hunter2-is-the-password"
	key := bytes.Repeat([]byte{7}, trace.SharedSecretsKeySize)
	login := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
	login.SensitiveFields = []string{"password"}
	tools := func() llmtoolkit.Resolver {
		return (&lt.Fake{}).Add(login, func(context.Context, llmtoolkit.Call) (string, error) { return "logged in", nil }).
			Returns("read_log", "the log says: password="+secret)
	}
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			if dialect == "postgres" && !postgresEnabled() {
				t.Skip(postgresDSNVar + " is not set")
			}
			for _, tc := range []struct {
				name     string
				shared   bool
				otherKey bool
				conv     string // of the read
				scrubbed bool
			}{
				{"shared", true, false, convA, true},
				{"not shared", false, false, convA, false},
				{"another conversation", true, false, convB, false},
				{"another key", true, true, convA, false},
			} {
				t.Run(tc.name, func(t *testing.T) {
					var opts []trace.Option
					if tc.shared {
						opts = append(opts, trace.WithSharedSecrets(key))
					}
					dbA, dbB := twoHandles(t, dialect, opts...)
					replicaA := trace.Record(tools(), dbA, opts...)
					bOpts := opts
					if tc.otherKey {
						bOpts = []trace.Option{trace.WithSharedSecrets(bytes.Repeat([]byte{8}, trace.SharedSecretsKeySize))}
					}
					replicaB := trace.Record(tools(), dbB, bOpts...)
					defer func() {
						require.NoError(t, replicaA.Close())
						if err := replicaB.Close(); tc.otherKey {
							require.ErrorIs(t, err, trace.ErrSharedSecrets, "Close reports the row lost")
						} else {
							require.NoError(t, err)
						}
					}()

					res := llmtoolkit.Execute(trace.WithConversation(t.Context(), tenant, convA, 1), replicaA,
						llmtoolkit.Call{ID: "1", Name: "login", Arguments: map[string]any{"password": secret}})
					require.False(t, res.IsError, res.Content)
					res = llmtoolkit.Execute(trace.WithConversation(t.Context(), tenant, tc.conv, 2), replicaB,
						llmtoolkit.Call{ID: "2", Name: "read_log", Arguments: map[string]any{}})
					require.False(t, res.IsError, res.Content)
					require.Contains(t, res.Content, secret, "the model reads the output as it is")

					var rows []trace.Trace
					require.NoError(t, dbA.Order("iteration").Find(&rows).Error)
					if tc.otherKey {
						require.Len(t, rows, 1, "the row B cannot scrub is not written")
						assert.Equal(t, int64(1), replicaB.Stats().Failed)
					} else {
						require.Len(t, rows, 2)
						data, err := json.Marshal(rows[1].Result)
						require.NoError(t, err)
						if tc.scrubbed {
							assert.NotContains(t, string(data), secret)
							assert.Contains(t, string(data), "password="+trace.Redacted)
						} else {
							assert.Contains(t, string(data), secret, "replica B did not know the secret")
						}
					}
					if tc.shared {
						var kept []map[string]any
						require.NoError(t, dbB.Raw(`SELECT * FROM `+trace.SecretsTable).Scan(&kept).Error)
						require.NotEmpty(t, kept)
						all, err := json.Marshal(kept)
						require.NoError(t, err)
						assert.NotContains(t, string(all), secret, "never in clear")
						assert.NotContains(t, string(all), "hunter2")
					}
				})
			}
		})
	}
}

// TestSharedSecretsBadKey: a key of the wrong size refuses every call
// before it runs, naming the option.
func TestSharedSecretsBadKey(t *testing.T) {
	db := openSQLite(t)
	rec := trace.Record(lt.NewFake(map[string]string{"x": "y"}), db, trace.WithSharedSecrets([]byte("short")), trace.WithDefaultConversation(tenant, convA))
	defer func() { require.NoError(t, rec.Close()) }()
	res := llmtoolkit.Execute(t.Context(), rec, llmtoolkit.Call{ID: "1", Name: "x", Arguments: map[string]any{}})
	require.True(t, res.IsError)
	require.ErrorIs(t, res.Err, trace.ErrSharedSecrets)
	assert.Equal(t, int64(1), rec.Stats().Refused)
}

// TestSharedSecretsBeforeTheToolRuns: a secret is shared when its call
// begins, before the tool runs: a row another replica writes while the
// call still runs (a job's output read meanwhile) is scrubbed of it.
func TestSharedSecretsBeforeTheToolRuns(t *testing.T) {
	const secret = "s3cret-of-a-running-call"
	key := bytes.Repeat([]byte{9}, trace.SharedSecretsKeySize)
	for _, dialect := range []string{"sqlite", "postgres"} {
		t.Run(dialect, func(t *testing.T) {
			if dialect == "postgres" && !postgresEnabled() {
				t.Skip(postgresDSNVar + " is not set")
			}
			dbA, dbB := twoHandles(t, dialect, trace.WithSharedSecrets(key))
			replicaB := trace.Record(lt.NewFake(map[string]string{"read_log": "printed: " + secret}), dbB, trace.WithSharedSecrets(key))
			login := llmtoolkit.MustTool("login", "Logs in.", map[string]any{"type": "object"})
			login.SensitiveFields = []string{"password"}
			var meanwhile llmtoolkit.Result
			replicaA := trace.Record((&lt.Fake{}).Add(login, func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
				meanwhile = llmtoolkit.Execute(trace.WithConversation(context.WithoutCancel(ctx), tenant, convA, 2), replicaB,
					llmtoolkit.Call{ID: "2", Name: "read_log", Arguments: map[string]any{}})
				return "logged in", nil
			}), dbA, trace.WithSharedSecrets(key))
			defer func() { require.NoError(t, replicaA.Close()); require.NoError(t, replicaB.Close()) }()
			res := llmtoolkit.Execute(trace.WithConversation(t.Context(), tenant, convA, 1), replicaA,
				llmtoolkit.Call{ID: "1", Name: "login", Arguments: map[string]any{"password": secret}})
			require.False(t, res.IsError, res.Content)
			require.False(t, meanwhile.IsError, meanwhile.Content)
			var rows []trace.Trace
			require.NoError(t, dbA.Order("iteration").Find(&rows).Error)
			require.Len(t, rows, 2)
			data, err := json.Marshal(rows)
			require.NoError(t, err)
			assert.NotContains(t, string(data), secret)
		})
	}
}
