package temporal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/activity"
	sdktemporal "go.temporal.io/sdk/temporal"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// TestJobLostWhenTheWorkerDies: a run starts a background job, then
// waits for it with job_output; the worker dies during that activity
// (its tools closed, the job killed with them) and the activity's retry
// runs on a new worker's tools, which answer at once that the job was
// lost; the model reads it and the run ends, with no wait for the job.
func TestJobLostWhenTheWorkerDies(t *testing.T) {
	newCode := func() *codetools.CodeTools {
		code, err := codetools.New(t.TempDir(), codetools.WithBackgroundJobs())
		require.NoError(t, err)
		t.Cleanup(func() { code.Close() })
		return code
	}
	before, after := newCode(), newCode()
	var mu sync.Mutex
	current := before
	var attempts []string
	resolver := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
		mu.Lock()
		code := current
		attempt := activity.GetInfo(ctx).Attempt
		attempts = append(attempts, fmt.Sprintf("%s#%d", call.Name, attempt))
		mu.Unlock()
		if call.Name == "job_output" && attempt == 1 {
			time.AfterFunc(300*time.Millisecond, func() { // the worker dies while the call waits
				mu.Lock()
				current = after // the retry goes to the new worker
				mu.Unlock()
				before.Close()
			})
			_, err := code.Resolve(ctx, call)
			return "", Retryable(fmt.Errorf("the worker died during the call (%v)", err))
		}
		return code.Resolve(ctx, call)
	})
	model := llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(llmtoolkittest.Call("bash", map[string]any{"command": "sleep 600", "run_in_background": true})),
		llmtoolkittest.CallTools(llmtoolkittest.Call("job_output", map[string]any{"job_id": 1, "wait_seconds": 600, "until_exit": true})),
		llmtoolkittest.Reply("the server is gone; starting it again"),
	)
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: llmtoolkit.Indexed(resolver, before.Tools())}})
	began := time.Now()
	env.ExecuteWorkflow(WorkflowName, RunInput{
		Messages:  []agentloop.Message{agentloop.UserMessage("start the server, then wait for it")},
		ToolRetry: &sdktemporal.RetryPolicy{InitialInterval: 10 * time.Millisecond, MaximumAttempts: 3},
	})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Less(t, time.Since(began), 30*time.Second, "never a wait for the lost job")
	mu.Lock()
	assert.Equal(t, []string{"bash#1", "job_output#1", "job_output#2"}, attempts)
	mu.Unlock()
	var lost *agentloop.Message
	for i := range out.History {
		if m := &out.History[i]; m.Role == agentloop.RoleTool && m.ToolName == "job_output" {
			lost = m
		}
	}
	require.NotNil(t, lost)
	assert.True(t, lost.IsError)
	assert.Contains(t, lost.Content, "was lost")
}
