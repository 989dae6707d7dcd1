package temporal

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
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
	newCode := func() (*codetools.CodeTools, error) {
		code, err := codetools.New(t.TempDir(), codetools.WithBackgroundJobs())
		if err == nil {
			t.Cleanup(func() { code.Close() })
		}
		return code, err
	}
	before, err := newCode()
	require.NoError(t, err)
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
				after, err := newCode() // a new worker, started after the job
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				current = after // the retry goes to it
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
		llmtoolkittest.Respond(func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			m := regexp.MustCompile(`Started job (\d+)`).FindStringSubmatch(msgs[len(msgs)-1].Content)
			if m == nil {
				return agentloop.Response{}, fmt.Errorf("no job id in %q", msgs[len(msgs)-1].Content)
			}
			id, _ := strconv.Atoi(m[1])
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{llmtoolkittest.Call("job_output", map[string]any{"job_id": id, "wait_seconds": 600, "until_exit": true})}}, nil
		}),
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
