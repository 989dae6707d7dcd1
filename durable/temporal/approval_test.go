package temporal

import (
	"testing"
	"time"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApprovalBySignal(t *testing.T) {
	tests := []struct {
		name     string
		approval *Approval // sent after two hours; nil: none
		timeout  time.Duration
		want     string // the deploy call's tool message
		deployed bool
	}{
		{name: "approved", approval: &Approval{CallID: "call_1_1", Approved: true, By: "ana"}, want: "wrote prod", deployed: true},
		{name: "refused", approval: &Approval{CallID: "call_1_1", Reason: "not on a Friday", By: "ana"},
			want: `permission denied: tool "write" was not run: not on a Friday`},
		{name: "no decision in time", timeout: 30 * time.Minute,
			want: `permission denied: tool "write" was not run: no one approved the call within 30m0s (RunInput.ApprovalTimeout)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model := llmtoolkittest.NewScriptedModel(t,
				llmtoolkittest.CallTools(
					llmtoolkittest.Call("write", map[string]any{"path": "prod"}),
					llmtoolkittest.Call("read", map[string]any{"path": "a"}),
				),
				llmtoolkittest.Reply("over"),
			)
			fx := newEffects()
			env := newEnv(t, &Activities{Send: model.Send, Options: agentloop.Options{Resolver: tools(fx)}})
			var pending []PendingApproval
			var queryErr error
			env.RegisterDelayedCallback(func() {
				v, err := env.QueryWorkflow(PendingApprovalsQuery)
				if queryErr = err; err == nil {
					queryErr = v.Get(&pending)
				}
				if tt.approval != nil {
					env.SignalWorkflow(ApprovalSignal, Approval{CallID: "call_9_9", Approved: true}) // for no call of the run: ignored
					env.SignalWorkflow(ApprovalSignal, *tt.approval)
				}
			}, 2*time.Hour)
			env.ExecuteWorkflow(WorkflowName, RunInput{
				Messages:        []agentloop.Message{agentloop.UserMessage("deploy")},
				Approve:         []string{"write"},
				ApprovalTimeout: tt.timeout,
			})
			out := runOutput(t, env)
			require.NoError(t, out.Error())
			assert.Equal(t, tt.want, out.History[2].Content)
			assert.Equal(t, "contents of a", out.History[3].Content, "a call that needs no approval runs")
			done, _ := fx.snapshot()
			assert.Equal(t, tt.deployed, done["call_1_1"] == 1)
			if tt.timeout == 0 {
				require.NoError(t, queryErr)
				require.Len(t, pending, 1, "the run waits for the one call that needs approval")
				assert.Equal(t, "call_1_1", pending[0].Call.ID)
				assert.Equal(t, 1, pending[0].Iteration)
				assert.Equal(t, "prod", pending[0].Call.Arguments["path"])
			}
			if !tt.deployed {
				assert.True(t, out.History[2].IsError)
			}
			assert.Len(t, model.Requests(), 2)
		})
	}
}
