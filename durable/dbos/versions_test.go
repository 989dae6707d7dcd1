package dbos

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// syncBuffer is a bytes.Buffer safe for DBOS's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRunOfAnotherVersion: a run interrupted under one application version
// and met by an engine of another (a rebuilt binary) is named at Launch,
// and Start and Result answer with ErrOtherVersion at once instead of
// waiting forever.
func TestRunOfAnotherVersion(t *testing.T) {
	ctx := context.Background()
	db := "sqlite:" + filepath.Join(t.TempDir(), "dbos.db")
	agentFn := approvalAgent(t.TempDir())

	old, err := New(ctx, Config{DatabaseURL: db, ExecutorID: "a", ApplicationVersion: "v1", Agent: agentFn, Logger: quietLogger()})
	require.NoError(t, err)
	require.NoError(t, old.Launch())
	require.NoError(t, old.Start(ctx, "deploy-run", Input{Messages: []agentloop.Message{agentloop.UserMessage("deploy")}}))
	waitPending(t, old, "deploy-run")
	_ = old.Shutdown(time.Second) // the run stays pending: interrupted

	var logs syncBuffer
	rebuilt, err := New(ctx, Config{DatabaseURL: db, ExecutorID: "a", ApplicationVersion: "v2", Agent: agentFn,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	require.NoError(t, err)
	require.NoError(t, rebuilt.Launch())
	defer rebuilt.Shutdown(5 * time.Second)
	assert.Contains(t, logs.String(), "deploy-run", "Launch names the run it leaves")
	assert.Contains(t, logs.String(), "their_version=v1")

	t0 := time.Now()
	err = rebuilt.Start(ctx, "deploy-run", Input{})
	require.ErrorIs(t, err, ErrOtherVersion)
	assert.ErrorContains(t, err, `ApplicationVersion "v1"`)
	_, err = rebuilt.Result(ctx, "deploy-run")
	require.ErrorIs(t, err, ErrOtherVersion, "an error, not a wait for ever")
	assert.Less(t, time.Since(t0), 10*time.Second)

	require.NoError(t, rebuilt.Start(ctx, "new-run", Input{Messages: []agentloop.Message{agentloop.UserMessage("deploy")}}), "its own runs start as usual")
	waitPending(t, rebuilt, "new-run")
}
