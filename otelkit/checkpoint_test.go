//go:build linux

package otelkit_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/llmtoolkit/llmtoolkit/checkpoint"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// TestCheckpointSpans: a save and a rewind are spans with their figures;
// a failed rewind's span holds the error.
func TestCheckpointSpans(t *testing.T) {
	ctx := context.Background()
	root := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("1"), 0o644))
	db, err := checkpoint.OpenSQLite(filepath.Join(t.TempDir(), "cp.db"))
	require.NoError(t, err)
	store, err := checkpoint.NewStore(db)
	require.NoError(t, err)
	tel := newTelemetry(t)
	c, err := checkpoint.New(store, root, checkpoint.WithTracer(otelkit.Checkpoints(tel.opts()...)))
	require.NoError(t, err)
	cp, err := c.Save(ctx, checkpoint.KindTurn, "")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(root, "a"), []byte("2"), 0o644))
	_, err = c.Rewind(ctx, cp.ID, checkpoint.RewindOptions{})
	require.NoError(t, err)
	_, err = c.Rewind(ctx, "no-such-id", checkpoint.RewindOptions{})
	require.Error(t, err)

	spans := tel.spans()
	require.Equal(t, []string{"checkpoint save", "checkpoint rewind", "checkpoint rewind"}, names(spans))
	save := attrs(spans[0])
	assert.Equal(t, cp.ID, save["llmtoolkit.checkpoint.id"])
	assert.Equal(t, "turn", save["llmtoolkit.checkpoint.kind"])
	assert.Equal(t, int64(1), save["llmtoolkit.checkpoint.hashed_files"])
	assert.Equal(t, root, save["llmtoolkit.checkpoint.root"])
	rewind := attrs(spans[1])
	assert.Equal(t, int64(1), rewind["llmtoolkit.checkpoint.changes"])
	assert.Equal(t, false, rewind["llmtoolkit.checkpoint.dry_run"])
	assert.Equal(t, codes.Unset, spans[1].Status.Code)
	assert.Equal(t, codes.Error, spans[2].Status.Code)
	assert.Contains(t, spans[2].Status.Description, "no such checkpoint")
}
