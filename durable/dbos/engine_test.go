package dbos

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
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

// TestRunErrorRecorded: the loop's error (here the model's) is the run's
// recorded result, not a failure of the engine; a halting tool's error
// keeps its sentinels.
func TestRunErrorRecorded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		send  agentloop.SendFunc
		check func(t *testing.T, err error)
	}{
		{"model error", func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
			return agentloop.Response{}, errors.New("rate limited")
		}, func(t *testing.T, err error) { assert.Contains(t, err.Error(), "rate limited") }},
		{"halt", func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "h", Name: "halt", Arguments: map[string]any{}}}}, nil
		}, func(t *testing.T, err error) {
			assert.ErrorIs(t, err, agentloop.ErrHalted)
			assert.ErrorIs(t, err, llmtoolkit.ErrHalt)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			build := func(context.Context, Run) (agentloop.SendFunc, agentloop.Options, error) {
				tool := llmtoolkit.MustTool("halt", "stops", map[string]any{"type": "object"})
				halt := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) { return "", llmtoolkit.Halt("enough") })
				return tc.send, agentloop.Options{Resolver: llmtoolkit.Indexed(halt, []llmtoolkit.Tool{tool}), Logger: quietLogger()}, nil
			}
			e := newEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), build)
			defer e.Shutdown(5 * time.Second)
			res, err := e.Run(context.Background(), "r", Input{Messages: []agentloop.Message{agentloop.UserMessage("go")}})
			require.NoError(t, err, "the engine did not fail")
			require.Error(t, res.Err())
			assert.NotErrorIs(t, res.Err(), ErrEngine)
			tc.check(t, res.Err())
			again, err := e.Result(context.Background(), "r")
			require.NoError(t, err)
			assert.Equal(t, res.Err().Error(), again.Err().Error(), "read back from the database")
		})
	}
}

// TestToolKeyNamesTheRun: a tool of a run sees the run's ID, so its
// llmtoolkit.IdempotencyKey is the same in every attempt of that run and
// differs between runs whose calls have the same IDs.
func TestToolKeyNamesTheRun(t *testing.T) {
	keys := make(chan string, 4)
	build := func(context.Context, Run) (agentloop.SendFunc, agentloop.Options, error) {
		send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			if len(msgs) > 1 {
				return agentloop.Response{Content: "done"}, nil
			}
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "call-1", Name: "key", Arguments: map[string]any{}}}}, nil
		}
		tool := llmtoolkit.MustTool("key", "reports its idempotency key", map[string]any{"type": "object"})
		resolve := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			keys <- llmtoolkit.IdempotencyKey(ctx, call)
			return "ok", nil
		})
		return send, agentloop.Options{Resolver: llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{tool}), Logger: quietLogger()}, nil
	}
	e := newEngine(t, "sqlite:"+filepath.Join(t.TempDir(), "dbos.db"), build)
	defer e.Shutdown(5 * time.Second)
	for _, id := range []string{"run-a", "run-b"} {
		res, err := e.Run(context.Background(), id, Input{Messages: []agentloop.Message{agentloop.UserMessage("go")}})
		require.NoError(t, err)
		require.NoError(t, res.Err())
	}
	a, b := <-keys, <-keys
	assert.Equal(t, "run-a/"+"/1/call-1", a)
	assert.Equal(t, "run-b/"+"/1/call-1", b)
}
