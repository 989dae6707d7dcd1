package temporal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
)

func TestToolActivityFailingMidCallIsRetriedAndItsEffectHappensOnce(t *testing.T) {
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("deploy", map[string]any{"env": "prod"})),
		llmtoolkittest.Reply("deployed"),
	)
	fx := newEffects()
	var mu sync.Mutex
	var attempts []int32
	var sessions []map[string]any
	var keys []string
	resolver := llmtoolkittest.NewFake(nil).Handle("deploy", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		attempt := activity.GetInfo(ctx).Attempt
		mu.Lock()
		attempts = append(attempts, attempt)
		sessions = append(sessions, llmtoolkit.ScopeFrom(ctx).Session)
		mu.Unlock()
		key := llmtoolkit.IdempotencyKey(ctx, call)
		mu.Lock()
		keys = append(keys, key)
		mu.Unlock()
		again := fx.do(key) // the deployment, keyed by run, iteration and call ID
		if attempt == 1 {
			// The connection drops after the deployment happened, before
			// its answer was recorded: the attempt fails.
			return "", Retryable(errors.New("connection reset while reading the deploy answer"))
		}
		if again {
			return "prod already deployed by this call", nil
		}
		return "deployed prod", nil
	})
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: resolver}})
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:  []agentloop.Message{agentloop.UserMessage("deploy prod")},
		ToolRetry: &sdktemporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 5},
		Session:   map[string]any{"conversation_id": "7d0c4c7e-0f7e-4d5e-9a51-3f2b0c8e1a10"},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Equal(t, []int32{1, 2}, attempts, "the failed attempt is retried once")
	for _, s := range sessions {
		assert.Equal(t, "7d0c4c7e-0f7e-4d5e-9a51-3f2b0c8e1a10", s["conversation_id"], "every attempt gets the run's session")
	}
	require.Len(t, keys, 2)
	assert.Equal(t, keys[0], keys[1], "every attempt has the same idempotency key")
	assert.True(t, strings.HasPrefix(keys[0], "default-test-workflow-id/"), "the key names the run: %s", keys[0])
	assert.True(t, strings.HasSuffix(keys[0], "/call_1_1"), keys[0])
	done, tries := fx.snapshot()
	assert.Equal(t, map[string]int{keys[0]: 1}, done, "the deployment happened once")
	assert.Equal(t, map[string]int{keys[0]: 2}, tries)
	assert.Equal(t, "prod already deployed by this call", out.History[2].Content, "the second attempt's answer is the call's outcome")
	assert.Len(t, model.Requests(), 2)
}

func TestToolActivityWhoseAttemptsAreSpentGoesBackToTheModel(t *testing.T) {
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("fetch", nil)),
		llmtoolkittest.Reply("the fetch failed"),
	)
	var calls int
	var mu sync.Mutex
	resolver := llmtoolkittest.NewFake(nil).Handle("fetch", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return "", Retryable(fmt.Errorf("upstream answered 503: %w", llmtoolkit.ErrInvalidCall))
	})
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: resolver}})
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:  []agentloop.Message{agentloop.UserMessage("fetch")},
		ToolRetry: &sdktemporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Equal(t, 3, calls)
	tm := out.History[2]
	assert.True(t, tm.IsError)
	assert.Contains(t, tm.Content, "upstream answered 503")
	assert.Contains(t, tm.Content, "failed after its attempts")
}

// The heartbeat tests run in real time: the SDK sends a heartbeat at most
// every 0.8 × HeartbeatTimeout, so the timeouts leave room for a loaded
// machine.
func TestHeartbeats(t *testing.T) {
	t.Parallel()
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("build", nil), llmtoolkittest.Call("hang", nil)),
		llmtoolkittest.Reply("built; the other one hung"),
	)
	var hangCause error
	resolver := llmtoolkittest.NewFake(nil).
		Handle("build", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			// Longer than the heartbeat timeout, but reporting progress.
			for i := range 40 {
				llmtoolkit.ReportProgress(ctx, llmtoolkit.Progress{Progress: float64(i), Total: 40, Message: "compiling"})
				select {
				case <-ctx.Done():
					return "", context.Cause(ctx)
				case <-time.After(100 * time.Millisecond):
				}
			}
			return "built", nil
		}).
		Handle("hang", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			select { // reports nothing: deemed stuck
			case <-ctx.Done():
				hangCause = context.Cause(ctx)
				return "", ctx.Err()
			case <-time.After(30 * time.Second):
				return "woke up", nil
			}
		})
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: resolver}})
	var hmu sync.Mutex
	beats := map[string]int{}
	env.SetOnActivityHeartbeatListener(func(info *activity.Info, _ converter.EncodedValues) {
		hmu.Lock()
		beats[info.ActivityID]++
		hmu.Unlock()
	})
	start := time.Now()
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:         []agentloop.Message{agentloop.UserMessage("build")},
		HeartbeatTimeout: 3 * time.Second,
		ToolRetry:        &sdktemporal.RetryPolicy{MaximumAttempts: 1},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Less(t, time.Since(start), 20*time.Second, "the stuck tool was stopped")
	assert.Equal(t, "built", out.History[2].Content, "a tool that reports progress outlives the heartbeat timeout")
	hung := out.History[3]
	assert.True(t, hung.IsError)
	assert.Contains(t, hung.Content, "timed out")
	assert.ErrorIs(t, hangCause, ErrHeartbeatTimeout, "the stuck tool's context is cancelled")
	hmu.Lock()
	defer hmu.Unlock()
	assert.GreaterOrEqual(t, beats["tool/1/0/call_1_1"], 2, "the progress reports heartbeat the activity")
}

func TestHeartbeatEveryKeepsASilentToolAlive(t *testing.T) {
	t.Parallel()
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("wait", nil)),
		llmtoolkittest.Reply("waited"),
	)
	resolver := llmtoolkittest.NewFake(nil).Handle("wait", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		select {
		case <-ctx.Done():
			return "", context.Cause(ctx)
		case <-time.After(4 * time.Second):
			return "waited", nil
		}
	})
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: resolver}, HeartbeatEvery: 100 * time.Millisecond})
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:         []agentloop.Message{agentloop.UserMessage("wait")},
		HeartbeatTimeout: 3 * time.Second,
		ToolRetry:        &sdktemporal.RetryPolicy{MaximumAttempts: 1},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Equal(t, "waited", out.History[2].Content)
}
