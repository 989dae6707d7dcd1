package temporal

import (
	"context"
	"flag"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

var update = flag.Bool("update", false, "rewrite testdata/agent_run.history.json from a run in the test environment")

// recordedHistory is the history of the four-turn run, as a server would
// have written it (see historyRecorder); committed so that a change of the
// workflow that would break the runs in flight fails this test.
const recordedHistory = "testdata/agent_run.history.json"

// countingSend wraps send, counting its calls.
func countingSend(send agentloop.SendFunc, n *atomic.Int64) agentloop.SendFunc {
	return func(ctx context.Context, m []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		n.Add(1)
		return send(ctx, m, tools)
	}
}

func replayer(t *testing.T, wf any) worker.WorkflowReplayer {
	t.Helper()
	r := worker.NewWorkflowReplayer()
	r.RegisterWorkflowWithOptions(wf, workflow.RegisterOptions{Name: WorkflowName})
	return r
}

func replayResult(t *testing.T, r worker.WorkflowReplayer) RunOutput {
	t.Helper()
	g, ok := r.(interface {
		GetWorkflowResult(workflowID string, valuePtr any) error
	})
	require.True(t, ok, "the SDK's replayer gives the replayed result")
	var out RunOutput
	require.NoError(t, g.GetWorkflowResult("", &out))
	return out
}

func TestReplayOfARecordedRunRunsNoActivityAgain(t *testing.T) {
	var modelCalls atomic.Int64
	fx := newEffects()
	acts := &Activities{Send: countingSend(fourTurns(t).Send, &modelCalls), Options: agentloop.Options{Resolver: tools(fx)}}
	in := RunInput{Messages: []agentloop.Message{agentloop.UserMessage("write a, b and c")}}
	out, h := recordRun(t, acts, in)
	require.NoError(t, out.Error())
	require.EqualValues(t, 4, modelCalls.Load())
	fresh := filepath.Join(t.TempDir(), "history.json")
	require.NoError(t, writeHistory(fresh, h))
	if *update {
		require.NoError(t, writeHistory(recordedHistory, h))
	}
	effectsBefore, triesBefore := fx.snapshot()

	for _, path := range []string{fresh, recordedHistory} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			r := replayer(t, Workflow)
			require.NoError(t, r.ReplayWorkflowHistoryFromJSONFile(nil, path), "the worker is deterministic")
			got := replayResult(t, r)
			assert.Equal(t, out.Response.Content, got.Response.Content, "the replayed run reads every outcome back from the history")
			assert.Equal(t, out.History, got.History)
			assert.EqualValues(t, 4, modelCalls.Load(), "no model call again")
			effects, tries := fx.snapshot()
			assert.Equal(t, effectsBefore, effects, "no side effect again")
			assert.Equal(t, triesBefore, tries, "no tool call again")
		})
	}
}

func TestReplayFailsOnANonDeterministicChange(t *testing.T) {
	tests := []struct {
		name string
		wf   func(workflow.Context, RunInput) (RunOutput, error)
	}{
		{"a step added before the first model call", func(ctx workflow.Context, in RunInput) (RunOutput, error) {
			if err := workflow.Sleep(ctx, time.Second); err != nil {
				return RunOutput{}, err
			}
			return Workflow(ctx, in)
		}},
		{"the turn's calls run one at a time", func(ctx workflow.Context, in RunInput) (RunOutput, error) {
			in.MaxParallel = 1
			return Workflow(ctx, in)
		}},
		{"one iteration fewer", func(ctx workflow.Context, in RunInput) (RunOutput, error) {
			in.MaxIterations = 3
			return Workflow(ctx, in)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := replayer(t, tt.wf).ReplayWorkflowHistoryFromJSONFile(nil, recordedHistory)
			require.Error(t, err)
			// TMPRL1100 is the SDK's code of a non-determinism error.
			assert.Contains(t, err.Error(), "TMPRL1100")
		})
	}
}
