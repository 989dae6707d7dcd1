package dbos

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewInvalidConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"no database", Config{Agent: benchAgent}, "Config.DatabaseURL"},
		{"no agent", Config{DatabaseURL: "sqlite::memory:"}, "Config.Agent"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := New(context.Background(), tc.cfg)
			require.ErrorIs(t, err, ErrInvalidConfig)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestResultAndApproveErrors: an unknown run, an empty ID, and a Result
// whose ctx ends while the run waits for a person (the run goes on).
func TestResultAndApproveErrors(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), approvalAgent(t.TempDir()))
	defer e.Shutdown(5 * time.Second)

	_, err := e.Result(ctx, "nope")
	require.ErrorIs(t, err, ErrRunNotFound)
	require.ErrorIs(t, e.Start(ctx, "", Input{}), ErrInvalidConfig)
	require.ErrorIs(t, e.Approve(ctx, "nope", "", agent.Allow()), ErrInvalidConfig)

	require.NoError(t, e.Start(ctx, "waits", Input{Messages: []agentloop.Message{agentloop.UserMessage("deploy")}}))
	waitPending(t, e, "waits")
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = e.Result(short, "waits")
	require.ErrorIs(t, err, context.DeadlineExceeded)
	assert.Less(t, time.Since(t0), 5*time.Second)
	_, pending, err := e.Pending(ctx, "waits")
	require.NoError(t, err)
	assert.True(t, pending, "the run still waits")

	require.NoError(t, e.Start(ctx, "waits", Input{}), "starting an ID again is the same run")
	require.NoError(t, e.Approve(ctx, "waits", "deploy-1", agent.Deny("no")))
	res, err := e.Result(ctx, "waits")
	require.NoError(t, err)
	assert.Contains(t, res.Response.Content, "no")
}
