package temporal

import (
	"context"
	"fmt"
	"log/slog"
	"os"
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
	tlog "go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
)

// effects is a store of side effects keyed by call ID, as a tool with side
// effects keeps one: a call ID seen before is not done again.
type effects struct {
	mu    sync.Mutex
	done  map[string]int // call ID -> times the effect happened
	tries map[string]int // call ID -> times the tool was called
}

func newEffects() *effects { return &effects{done: map[string]int{}, tries: map[string]int{}} }

// do records one attempt of call id, and the effect unless it happened.
func (e *effects) do(id string) (again bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.tries[id]++
	if e.done[id] > 0 {
		return true
	}
	e.done[id]++
	return false
}

func (e *effects) snapshot() (done, tries map[string]int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	done, tries = map[string]int{}, map[string]int{}
	for k, v := range e.done {
		done[k] = v
	}
	for k, v := range e.tries {
		tries[k] = v
	}
	return done, tries
}

// fourTurns is the scripted agent of the tests: three turns of tool calls
// (two in parallel, then one, then one), then an answer.
func fourTurns(t *testing.T) *llmtoolkittest.ScriptedModel {
	return llmtoolkittest.NewScriptedModel(t,
		llmtoolkittest.CallTools(
			llmtoolkittest.Call("write", map[string]any{"path": "a"}),
			llmtoolkittest.Call("write", map[string]any{"path": "b"}),
		),
		llmtoolkittest.CallTools(llmtoolkittest.Call("read", map[string]any{"path": "a"})),
		llmtoolkittest.CallTools(llmtoolkittest.Call("write", map[string]any{"path": "c"})),
		llmtoolkittest.Reply("done: a, b and c written"),
	)
}

// tools returns the resolver of the tests: write has a side effect keyed
// by the call ID; read has none.
func tools(fx *effects) *llmtoolkittest.Fake {
	return llmtoolkittest.NewFake(nil).
		Handle("write", func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			if fx.do(call.ID) {
				return fmt.Sprintf("%v already written", call.Arguments["path"]), nil
			}
			return fmt.Sprintf("wrote %v", call.Arguments["path"]), nil
		}).
		Returns("read", "contents of a")
}

func newEnv(t *testing.T, acts *Activities) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var s testsuite.WorkflowTestSuite
	// The environment's own debug lines drown the test's output.
	s.SetLogger(tlog.NewStructuredLogger(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))))
	env := s.NewTestWorkflowEnvironment()
	env.SetTestTimeout(time.Minute) // real time: the default 3 s is short on a loaded machine
	require.NoError(t, Register(env, acts))
	return env
}

func runOutput(t *testing.T, env *testsuite.TestWorkflowEnvironment) RunOutput {
	t.Helper()
	require.True(t, env.IsWorkflowCompleted())
	require.NoError(t, env.GetWorkflowError())
	var out RunOutput
	require.NoError(t, env.GetWorkflowResult(&out))
	return out
}

func TestWorkflowRunsAFourTurnAgent(t *testing.T) {
	model := fourTurns(t)
	fx := newEffects()
	env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: tools(fx)}})
	var mu sync.Mutex
	var started []string
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		mu.Lock()
		defer mu.Unlock()
		started = append(started, info.ActivityID)
	})
	env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("write a, b and c")}})
	out := runOutput(t, env)

	require.NoError(t, out.Error())
	assert.Equal(t, "done: a, b and c written", out.Response.Content)
	assert.Len(t, model.Requests(), 4, "the model is called once per turn")
	assert.Equal(t, 0, model.Remaining())
	done, tries := fx.snapshot()
	assert.Equal(t, map[string]int{"call_1_1": 1, "call_1_2": 1, "call_3_1": 1}, done)
	assert.Equal(t, done, tries)
	// user, then 3 × (assistant + its tool messages), then the answer
	require.Len(t, out.History, 1+3+2+1+1+1)
	assert.Equal(t, agentloop.RoleTool, out.History[2].Role)
	assert.Equal(t, "wrote a", out.History[2].Content)
	assert.Equal(t, "wrote b", out.History[3].Content)
	assert.Equal(t, "contents of a", out.History[5].Content)
	assert.ElementsMatch(t, []string{
		"model/1", "tool/1/0/call_1_1", "tool/1/1/call_1_2", "model/2", "tool/2/0/call_2_1",
		"model/3", "tool/3/0/call_3_1", "model/4",
	}, started, "each step is an activity keyed by iteration, index and call ID")
	// The worker's tools are offered to the model.
	require.Len(t, model.LastRequest().Tools, 2)
}
