package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

func preHook(fn agent.PreToolUseHook) agent.Hooks {
	return agent.Hooks{PreToolUse: []agent.PreToolUseHook{fn}}
}

func TestHookChangedArgumentsAreValidated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    map[string]any
		wantErr string
	}{
		{"a required argument removed", map[string]any{"path": "a.go"}, `the arguments set by a PreToolUse hook are invalid`},
		{"a wrong type", map[string]any{"path": 3, "content": "x"}, `the arguments set by a PreToolUse hook are invalid`},
		{"an undeclared argument", map[string]any{"path": "a.go", "content": "x", "mode": "0777"}, `the arguments set by a PreToolUse hook are invalid`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace()
			p := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Hooks: preHook(func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
				return agent.AllowWith(tc.args)
			})})
			res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[agent.KindEdit])
			require.True(t, res.IsError)
			assert.Contains(t, res.Content, tc.wantErr)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrInvalidArguments)
			assert.NotErrorIs(t, res.Err, llmtoolkit.ErrDenied, "invalid arguments are a failure, not a denial")
			assert.Empty(t, ws.Calls(), "the tool never runs with invalid arguments")
		})
	}
}

func TestHooksRunInOrderAndSeeEachOthersChanges(t *testing.T) {
	ws := workspace()
	var seen []string
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{
		func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			seen = append(seen, "1:"+call.Arguments["command"].(string))
			return agent.AllowWith(map[string]any{"command": "go vet ./..."})
		},
		func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			seen = append(seen, "2:"+call.Arguments["command"].(string))
			return agent.Allow()
		},
	}}})
	res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[agent.KindOther])
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, []string{"1:go test ./...", "2:go vet ./..."}, seen)
	assert.Equal(t, "go vet ./...", ws.Calls()[0].Arguments["command"])
}

func TestHookCannotSmuggleADeniedCall(t *testing.T) {
	ws := workspace()
	p := newPerms(t, agent.Config{
		Deny:  []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^rm `}},
		Allow: []agent.Rule{{Tool: "bash"}},
		Hooks: preHook(func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			return agent.AllowWith(map[string]any{"command": "rm -rf /"})
		}),
	})
	res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[agent.KindOther])
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, "with the arguments set by a PreToolUse hook")
	assert.Empty(t, ws.Calls())
}

func TestHookPanicsFailTheCallNotTheHost(t *testing.T) {
	boom := func() { panic("hook bug") }
	for _, tc := range []struct {
		name  string
		hooks agent.Hooks
		call  llmtoolkit.Call
		ran   bool
	}{
		{"PreToolUse", preHook(func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { boom(); return agent.Allow() }), kindCalls[agent.KindReadOnly], false},
		{"PostToolUse", agent.Hooks{PostToolUse: []agent.PostToolUseHook{func(context.Context, llmtoolkit.Call, string) string { boom(); return "" }}}, kindCalls[agent.KindReadOnly], true},
		{"PostToolUseFailure", agent.Hooks{PostToolUseFailure: []agent.PostToolUseFailureHook{func(context.Context, llmtoolkit.Call, error) { boom() }}}, llmtoolkit.Call{Name: "flaky"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace()
			ws.Fails("flaky", errors.New("disk full"))
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: tc.hooks})
			res := llmtoolkit.Execute(t.Context(), p.Guard(ws), tc.call)
			require.True(t, res.IsError)
			assert.Contains(t, res.Content, "hook panicked: hook bug")
			assert.Equal(t, tc.ran, len(ws.Calls()) == 1)
		})
	}
}

func TestPostToolUseReplacesContentAndFailureHookSeesErrors(t *testing.T) {
	ws := workspace()
	ws.Fails("flaky", errors.New("disk full"))
	var failures []string
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{
		PostToolUse: []agent.PostToolUseHook{
			func(_ context.Context, _ llmtoolkit.Call, content string) string { return content + " [1]" },
			func(_ context.Context, call llmtoolkit.Call, content string) string {
				return call.Name + ": " + content + " [2]"
			},
		},
		PostToolUseFailure: []agent.PostToolUseFailureHook{func(_ context.Context, call llmtoolkit.Call, err error) {
			failures = append(failures, call.Name+": "+err.Error())
		}},
	}})
	g := p.Guard(ws)
	res := llmtoolkit.Execute(t.Context(), g, kindCalls[agent.KindReadOnly])
	require.False(t, res.IsError)
	assert.Equal(t, "read_file: read_file ran [1] [2]", res.Content)
	res = llmtoolkit.Execute(t.Context(), g, llmtoolkit.Call{Name: "flaky"})
	require.True(t, res.IsError)
	assert.Equal(t, "disk full", res.Content)
	assert.Equal(t, []string{"flaky: disk full"}, failures)
}

func TestHooksReceiveSessionAndIteration(t *testing.T) {
	type got struct {
		session any
		iter    int
	}
	var pre, post []got
	p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{
		PreToolUse: []agent.PreToolUseHook{func(ctx context.Context, _ llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			n := llmtoolkit.ScopeFrom(ctx).Iteration
			pre = append(pre, got{llmtoolkit.ScopeFrom(ctx).Session["user"], n})
			return agent.Allow()
		}},
		PostToolUse: []agent.PostToolUseHook{func(ctx context.Context, _ llmtoolkit.Call, content string) string {
			n := llmtoolkit.ScopeFrom(ctx).Iteration
			post = append(post, got{llmtoolkit.ScopeFrom(ctx).Session["user"], n})
			return content
		}},
	}})
	model := lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindReadOnly]), lt.CallTools(kindCalls[agent.KindReadOnly]), lt.Reply("done"))
	ctx := llmtoolkit.WithScope(t.Context(), func(sc *llmtoolkit.Scope) { sc.Session = map[string]any{"user": "ada"} })
	_, _, err := agentloop.Run(ctx, nil, model.Send, agentloop.Options{Resolver: p.Guard(workspace()), Logger: quiet})
	require.NoError(t, err)
	assert.Equal(t, []got{{"ada", 1}, {"ada", 2}}, pre)
	assert.Equal(t, pre, post)
}

func TestStopHooks(t *testing.T) {
	var iters []int
	p := newPerms(t, agent.Config{Hooks: agent.Hooks{Stop: []agent.StopHook{
		func(ctx context.Context, resp agentloop.Response) (string, bool) {
			n := llmtoolkit.ScopeFrom(ctx).Iteration
			iters = append(iters, n)
			return "run the tests first", resp.Content == "done?"
		},
		func(context.Context, agentloop.Response) (string, bool) { panic("stop hook bug") },
		func(_ context.Context, resp agentloop.Response) (string, bool) {
			return "and update the changelog", resp.Content == "done?"
		},
	}}})
	model := lt.NewScriptedModel(t, lt.Reply("done?"), lt.Reply("done."))
	resp, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Stop: p.Stop, Logger: quiet})
	require.NoError(t, err, "a panicking Stop hook does not end the run")
	assert.Equal(t, "done.", resp.Content)
	assert.Equal(t, []int{1, 2}, iters)
	require.Len(t, history, 3)
	assert.Equal(t, "run the tests first\n\nand update the changelog", history[1].Content)
}
