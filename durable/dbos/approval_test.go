package dbos

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// approvalAgent: turn 1 calls "deploy" (a mutating tool the permission
// guard asks about, with AskPerson), turn 2 repeats the tool's answer.
// Each deployment appends a line to deploys.log in dir.
func approvalAgent(dir string) AgentFunc {
	return func(ctx context.Context, run Run) (agentloop.SendFunc, agentloop.Options, error) {
		perms, err := agent.New(agent.Config{CanUseTool: AskPerson})
		if err != nil {
			return nil, agentloop.Options{}, err
		}
		tool := llmtoolkit.MustTool("deploy", "deploys", map[string]any{"type": "object", "properties": map[string]any{"env": map[string]any{"type": "string"}}})
		resolve := llmtoolkit.ResolverFunc(func(ctx context.Context, call llmtoolkit.Call) (string, error) {
			if err := appendLine(dir, "deploys.log", fmt.Sprint(call.ID, " ", call.Arguments["env"])); err != nil {
				return "", err
			}
			return "deployed to " + fmt.Sprint(call.Arguments["env"]), nil
		})
		send := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
			last := msgs[len(msgs)-1]
			if last.Role == agentloop.RoleTool {
				return agentloop.Response{Content: "tool said: " + last.Content}, nil
			}
			return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: "deploy-1", Name: "deploy", Arguments: map[string]any{"env": "prod"}}}}, nil
		}
		return send, agentloop.Options{Resolver: perms.Guard(llmtoolkit.Indexed(resolve, []llmtoolkit.Tool{tool}))}, nil
	}
}

func newEngine(t *testing.T, db string, agentFn AgentFunc) *Engine {
	t.Helper()
	e, err := New(context.Background(), Config{DatabaseURL: db, ExecutorID: "a", ApplicationVersion: "test", Agent: agentFn, Logger: quietLogger()})
	require.NoError(t, err)
	require.NoError(t, e.Launch())
	return e
}

// waitPending waits for the run to wait for an approval.
func waitPending(t *testing.T, e *Engine, run string) Approval {
	t.Helper()
	var a Approval
	require.Eventually(t, func() bool {
		var ok bool
		var err error
		a, ok, err = e.Pending(context.Background(), run)
		require.NoError(t, err)
		return ok
	}, 30*time.Second, 20*time.Millisecond)
	return a
}

// TestApprovalSurvivesRestart: a run waits for a person's approval; the
// process shuts down while it waits; a new engine on the same database
// resumes the run, which waits again (the tool has not run); the answer
// sent to it by run ID lets the call run, once; a denial reaches the model.
func TestApprovalSurvivesRestart(t *testing.T) {
	for name, db := range databases(t) {
		t.Run(name, func(t *testing.T) {
			for _, tc := range []struct {
				name     string
				decision agent.Decision
				deploys  int
				answer   string
			}{
				{"allowed", agent.Allow(), 1, "tool said: deployed to prod"},
				{"allowed with other arguments", agent.AllowWith(map[string]any{"env": "staging"}), 1, "tool said: deployed to staging"},
				{"denied", agent.Deny("not on a Friday"), 0, "not on a Friday"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					dir, url := t.TempDir(), db(t)
					ctx := context.Background()
					e1 := newEngine(t, url, approvalAgent(dir))
					require.NoError(t, e1.Start(ctx, "run-approval", Input{Messages: []agentloop.Message{agentloop.UserMessage("deploy")}}))
					a := waitPending(t, e1, "run-approval")
					assert.Equal(t, Approval{CallID: "deploy-1", Tool: "deploy", Arguments: map[string]any{"env": "prod"}}, a)
					require.NoError(t, e1.Shutdown(10*time.Second))
					assert.NoFileExists(t, filepath.Join(dir, "deploys.log"), "the tool waits for its approval")

					e2 := newEngine(t, url, approvalAgent(dir))
					defer e2.Shutdown(10 * time.Second)
					assert.Equal(t, a, waitPending(t, e2, "run-approval"), "the resumed run waits for the same call")
					require.NoError(t, e2.Approve(ctx, "run-approval", a.CallID, tc.decision))
					rctx, cancel := context.WithTimeout(ctx, 60*time.Second)
					defer cancel()
					res, err := e2.Result(rctx, "run-approval")
					require.NoError(t, err)
					require.NoError(t, res.Err())
					assert.Contains(t, res.Response.Content, tc.answer)
					n := len(lines(t, dir, "deploys.log"))
					assert.Equal(t, tc.deploys, n)
					_, pending, err := e2.Pending(ctx, "run-approval")
					require.NoError(t, err)
					assert.False(t, pending)
				})
			}
		})
	}
}

// TestAskPersonOutsideEngine: AskPerson denies a call that does not run
// under an Engine, saying why.
func TestAskPersonOutsideEngine(t *testing.T) {
	d := AskPerson(context.Background(), llmtoolkit.Call{ID: "c", Name: "deploy"}, llmtoolkit.Tool{})
	assert.True(t, d.Deny)
	assert.Contains(t, d.Message, "does not run under a durable/dbos Engine")
}

// TestAskPersonNestedCall: inside a call's step, AskPerson denies a call
// other than the step's own (a sub-agent's), and leaves the step unasked.
func TestAskPersonNestedCall(t *testing.T) {
	slot := &approvalSlot{callID: "spawn-1"}
	ctx := context.WithValue(context.Background(), approvalKey{}, slot)
	d := AskPerson(ctx, llmtoolkit.Call{ID: "sub-1", Name: "deploy"}, llmtoolkit.Tool{})
	assert.True(t, d.Deny)
	assert.Contains(t, d.Message, `call "sub-1" runs inside call "spawn-1"`)
	assert.Nil(t, slot.asked())
	d = AskPerson(ctx, llmtoolkit.Call{ID: "spawn-1", Name: "spawn_agent"}, llmtoolkit.Tool{})
	assert.True(t, d.Deny, "waiting")
	assert.Equal(t, &Approval{CallID: "spawn-1", Tool: "spawn_agent"}, slot.asked())
}
