package temporal

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"
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

// stepLog records, during a replay, the activities the workflow asks for
// and those whose outcome it got (from the history: the replayer runs no
// activity).
type stepLog struct {
	interceptor.WorkerInterceptorBase
	asked, answered []string
}

func (s *stepLog) InterceptWorkflow(ctx workflow.Context, next interceptor.WorkflowInboundInterceptor) interceptor.WorkflowInboundInterceptor {
	return &stepLogInbound{WorkflowInboundInterceptorBase: interceptor.WorkflowInboundInterceptorBase{Next: next}, s: s}
}

type stepLogInbound struct {
	interceptor.WorkflowInboundInterceptorBase
	s *stepLog
}

func (i *stepLogInbound) Init(outbound interceptor.WorkflowOutboundInterceptor) error {
	return i.Next.Init(&stepLogOutbound{WorkflowOutboundInterceptorBase: interceptor.WorkflowOutboundInterceptorBase{Next: outbound}, s: i.s})
}

type stepLogOutbound struct {
	interceptor.WorkflowOutboundInterceptorBase
	s *stepLog
}

func (o *stepLogOutbound) ExecuteActivity(ctx workflow.Context, activityType string, args ...any) workflow.Future {
	id := workflow.GetActivityOptions(ctx).ActivityID
	o.s.asked = append(o.s.asked, id)
	f := o.Next.ExecuteActivity(ctx, activityType, args...)
	workflow.Go(ctx, func(ctx workflow.Context) { // a coroutine: no command
		if f.Get(ctx, nil) == nil {
			o.s.answered = append(o.s.answered, id)
		}
	})
	return f
}

// TestResumedRunWaitsOnlyForTheInterruptedStep replays the history of a
// run whose worker died while the third turn's tool call ran, as the
// worker that picks the run up does: the six recorded outcomes are read
// back from the history (the model is not called again, no tool runs
// again), and the one step whose outcome the run waits for is the
// interrupted call, which the server dispatches again (at least once).
func TestResumedRunWaitsOnlyForTheInterruptedStep(t *testing.T) {
	f, err := os.Open(recordedHistory)
	require.NoError(t, err)
	defer f.Close()
	h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
	require.NoError(t, err)
	cut := slices.IndexFunc(h.Events, func(e *historypb.HistoryEvent) bool {
		return e.GetActivityTaskScheduledEventAttributes().GetActivityId() == "tool/3/0/call_3_1"
	})
	require.Positive(t, cut)
	h.Events = h.Events[:cut+1] // the history ends with the call scheduled, not completed

	steps := &stepLog{}
	r, err := worker.NewWorkflowReplayerWithOptions(worker.WorkflowReplayerOptions{Interceptors: []interceptor.WorkerInterceptor{steps}})
	require.NoError(t, err)
	r.RegisterWorkflowWithOptions(Workflow, workflow.RegisterOptions{Name: WorkflowName})
	require.NoError(t, r.ReplayWorkflowHistory(nil, h), "the worker that resumes the run is deterministic")
	recorded := []string{"model/1", "tool/1/0/call_1_1", "tool/1/1/call_1_2", "model/2", "tool/2/0/call_2_1", "model/3"}
	assert.Equal(t, append(slices.Clone(recorded), "tool/3/0/call_3_1"), steps.asked, "the steps, in order, each matched to its recorded event")
	assert.ElementsMatch(t, recorded, steps.answered, "the recorded outcomes are read back; only the interrupted call is awaited")
}
