package agent_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// This file holds the attacks of issue 23 on the agent layer (rows 5 to 12
// and 14), one test each, written as a model that writes hostile calls.

// TestBypassKeepsDenyRules (row 11): deny rules hold in bypass mode too,
// whether the model sends the denied call or a hook turns a call into one,
// and exit_plan_mode outside plan mode is refused without asking the
// approver, in every mode.
func TestBypassKeepsDenyRules(t *testing.T) {
	deny := []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^rm `}}
	rm := llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "rm -rf /"}}
	toRm := agent.Hooks{PreToolUse: []agent.PreToolUseHook{func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
		return agent.AllowWith(map[string]any{"command": "rm -rf /"})
	}}}
	for _, tc := range []struct {
		name   string
		hooks  agent.Hooks
		call   llmtoolkit.Call
		wantIn string
	}{
		{"a denied call", agent.Hooks{}, rm, "forbids this call"},
		{"a hook's denied arguments", toRm, kindCalls[agent.KindOther], "forbids this call (with the arguments set by a PreToolUse hook)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace()
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: deny, Hooks: tc.hooks})
			res := llmtoolkit.Execute(t.Context(), p.Guard(ws), tc.call)
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, tc.wantIn)
			assert.Empty(t, ws.Calls())
		})
	}
	for _, mode := range []agent.Mode{agent.ModeBypass, agent.ModeDefault, agent.ModeAcceptEdits} {
		t.Run("exit_plan_mode in "+string(mode), func(t *testing.T) {
			p := newPerms(t, agent.Config{Mode: mode})
			asked := false
			g := p.Guard(agent.PlanMode(p, func(context.Context, string) agent.PlanDecision {
				asked = true
				return agent.PlanDecision{Approved: true, Mode: agent.ModeDefault}
			}))
			res := llmtoolkit.Execute(t.Context(), g, planCall("1. take over"))
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, "not in plan mode")
			assert.False(t, asked, "the approver is not asked")
			assert.Equal(t, mode, p.Mode())
		})
	}
}

// TestHooksSeeACopyOfTheArguments (row 10): a hook or the callback that
// changes the call's arguments in place, at any depth, and allows the call
// changes nothing: only the arguments it returns are applied, and those
// are validated and checked against the deny rules.
func TestHooksSeeACopyOfTheArguments(t *testing.T) {
	deny := []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `^rm `}}
	inPlace := func(call llmtoolkit.Call) {
		call.Arguments["command"] = "rm -rf /"
		if env, ok := call.Arguments["env"].(map[string]any); ok {
			env["PATH"] = "/evil"
		}
		if argv, ok := call.Arguments["argv"].([]any); ok {
			argv[0] = "rm"
		}
	}
	hook := func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { return agent.Allow() }
	bash := llmtoolkit.MustTool("bash", "Runs a command.", map[string]any{"type": "object", "properties": map[string]any{
		"command": str, "env": map[string]any{"type": "object"}, "argv": map[string]any{"type": "array"},
	}})
	for _, tc := range []struct {
		name string
		cfg  func(mutate agent.PreToolUseHook) agent.Config
	}{
		{"PreToolUse hook", func(m agent.PreToolUseHook) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Deny: deny, Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{m, hook}}}
		}},
		{"CanUseTool", func(m agent.PreToolUseHook) agent.Config {
			return agent.Config{Deny: deny, CanUseTool: agent.CanUseTool(m)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var ran []llmtoolkit.Call
			tools := (&lt.Fake{}).Add(bash, func(_ context.Context, call llmtoolkit.Call) (string, error) {
				ran = append(ran, call)
				return "ran", nil
			})
			p := newPerms(t, tc.cfg(func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
				inPlace(call)
				return agent.Allow()
			}))
			call := llmtoolkit.Call{Name: "bash", Arguments: map[string]any{
				"command": "ls", "env": map[string]any{"PATH": "/bin"}, "argv": []any{"ls"},
			}}
			res := llmtoolkit.Execute(t.Context(), p.Guard(tools), call)
			require.False(t, res.IsError, res.Content)
			require.Len(t, ran, 1)
			assert.Equal(t, map[string]any{"command": "ls", "env": map[string]any{"PATH": "/bin"}, "argv": []any{"ls"}}, ran[0].Arguments,
				"the tool runs on the arguments the rules saw")

			// Changes returned are applied, and checked.
			p = newPerms(t, tc.cfg(func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
				inPlace(call)
				return agent.AllowWith(call.Arguments)
			}))
			res = llmtoolkit.Execute(t.Context(), p.Guard(tools), call)
			require.True(t, res.IsError)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Len(t, ran, 1)
		})
	}
}

// readOnlyTool is a read-only tool that runs fn.
func readOnlyTool(name string, fn func(context.Context, llmtoolkit.Call) (string, error)) *lt.Fake {
	tool := llmtoolkit.MustTool(name, "A read-only tool.", schema(map[string]any{"q": str}))
	tool.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
	return (&lt.Fake{}).Add(tool, fn)
}

// TestSpawnAgentReturnsAtItsDeadline (row 8): a child tool that ignores
// its context does not hold the parent past the sub-agent's deadline; the
// stuck call finishes on its own goroutine and its result is dropped.
func TestSpawnAgentReturnsAtItsDeadline(t *testing.T) {
	release := make(chan struct{})
	finished := make(chan struct{})
	stuck := readOnlyTool("stuck", func(context.Context, llmtoolkit.Call) (string, error) {
		defer close(finished)
		select { // ignores its context
		case <-release:
		case <-time.After(3 * time.Second):
		}
		return "late", nil
	})
	sub := lt.NewScriptedModel(t, lt.CallTools(llmtoolkit.Call{Name: "stuck", Arguments: map[string]any{}}), lt.Reply("never"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: stuck, Timeout: 200 * time.Millisecond, NewID: fixedID("sub-slow")})
	start := time.Now()
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("wait"))
	took := time.Since(start)
	close(release)
	<-finished
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, context.DeadlineExceeded)
	assert.Contains(t, res.Content, "sub-agent sub-slow did not finish within its deadline (200ms)")
	assert.Less(t, took, 2*time.Second, "spawn_agent returns at its deadline, not when the stuck call does")
	require.NotNil(t, res.Display)
	assert.Contains(t, res.Display.Payload.(agent.SubAgentPayload).Error, "deadline")
}

// TestSubAgentOnEventPanic (row 9): a panicking OnEvent, called from the
// goroutines that run the child's parallel calls, fails the spawn_agent
// call; the host lives on.
func TestSubAgentOnEventPanic(t *testing.T) {
	ok := readOnlyTool("look", func(context.Context, llmtoolkit.Call) (string, error) { return "seen", nil })
	look := llmtoolkit.Call{Name: "look", Arguments: map[string]any{}}
	sub := lt.NewScriptedModel(t, lt.CallTools(look, look), lt.Reply("done"))
	spawn := newSpawn(t, agent.SubAgentConfig{Model: sub.Send, Tools: ok, NewID: fixedID("sub-p"),
		OnEvent: func(_ string, e agentloop.Event) {
			if e.Kind == agentloop.EventToolCall {
				panic("host bug in OnEvent")
			}
		}})
	res := llmtoolkit.Execute(t.Context(), spawn, spawnCall("look twice"))
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
	assert.Contains(t, res.Content, "OnEvent panicked: host bug in OnEvent")
}

// recipeWorkspace is workspace() with "survey", a recipe tool (not
// read-only) whose one step reads a file.
func recipeWorkspace() *lt.Fake {
	ws := workspace()
	survey := llmtoolkit.MustTool("survey", "Reads the project.", schema(map[string]any{"path": str}, "path"))
	survey.Recipe = func(args map[string]any) llmtoolkit.Plan {
		return llmtoolkit.Plan{Serial: []llmtoolkit.Call{{Name: "read_file", Arguments: map[string]any{"path": args["path"]}}}}
	}
	return ws.Add(survey, func(context.Context, llmtoolkit.Call) (string, error) { return "resolved, not planned", nil })
}

// TestRecipeCallIsChecked (row 5): a recipe call goes through the whole
// check (mode, rules, hooks, callback) before its plan runs; its steps are
// checked as before.
func TestRecipeCallIsChecked(t *testing.T) {
	survey := llmtoolkit.Call{Name: "survey", Arguments: map[string]any{"path": "a.go"}}
	for _, tc := range []struct {
		name      string
		cfg       func(trail *[]string) agent.Config
		wantIn    string // "" means the plan ran
		wantTrail []string
	}{
		{"denied by name", func(*[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "survey"}}}
		}, `the host's rule survey forbids this call`, nil},
		{"denied by argument", func(*[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "survey", Argument: "path", Glob: "*.go"}}}
		}, `forbids this call`, nil},
		{"refused by a hook", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{
				func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
					*tr = append(*tr, "hook "+call.Name)
					return agent.Deny("no surveys")
				}}}}
		}, "no surveys", []string{"hook survey"}},
		{"refused by the callback", func(tr *[]string) agent.Config {
			return agent.Config{CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
				*tr = append(*tr, "asked "+call.Name)
				return agent.Deny("the user said no")
			}}
		}, "the user said no", []string{"asked survey"}},
		{"allowed: the callback is asked for the recipe, then for its step", func(tr *[]string) agent.Config {
			return agent.Config{CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
				*tr = append(*tr, "asked "+call.Name)
				return agent.Allow()
			}}
		}, "", []string{"asked survey", "asked read_file"}},
		{"a hook's changed arguments reach the plan, checked", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}},
				Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{
					func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
						if call.Name != "survey" {
							return agent.Allow()
						}
						return agent.AllowWith(map[string]any{"path": "secrets/key"})
					}}}}
		}, "forbids this call (with the arguments set by a PreToolUse hook)", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trail []string
			ws := recipeWorkspace()
			p := newPerms(t, tc.cfg(&trail))
			res := llmtoolkit.Execute(t.Context(), p.Guard(ws), survey)
			assert.Equal(t, tc.wantTrail, trail)
			if tc.wantIn == "" {
				require.False(t, res.IsError, res.Content)
				assert.Equal(t, "read_file ran", res.Content)
				return
			}
			require.True(t, res.IsError, res.Content)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, tc.wantIn)
			assert.Empty(t, ws.Calls(), "no step ran")
		})
	}
}

// TestSubAgentInheritsTheParentsPermissions (row 6): a sub-agent runs under
// its parent's permissions: the parent's deny rules and mode hold for its
// calls, and a sub-agent's own permissions can only narrow them.
func TestSubAgentInheritsTheParentsPermissions(t *testing.T) {
	readSecret := llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "secrets/key"}}
	write := kindCalls[agent.KindEdit]
	for _, tc := range []struct {
		name     string
		parent   agent.Config
		child    *agent.Config // the sub-agent's own permissions
		call     llmtoolkit.Call
		wantIn   string // "" means the child's call ran
		mutating bool
	}{
		{"the parent's deny rule", agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}}},
			nil, readSecret, "forbids this call", false},
		{"the parent's mode: accept_edits asks for bash", agent.Config{Mode: agent.ModeAcceptEdits, CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			return agent.Deny("the user said no to " + "bash")
		}, Allow: []agent.Rule{{Tool: agent.SpawnToolName}}}, nil, kindCalls[agent.KindOther], "the user said no to bash", true},
		{"the parent's callback", agent.Config{CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			return agent.Deny("the user said no")
		}, Allow: []agent.Rule{{Tool: agent.SpawnToolName}}}, nil, write, "the user said no", true},
		{"a child's bypass does not widen the parent's rules", agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}}},
			&agent.Config{Mode: agent.ModeBypass}, readSecret, "forbids this call", false},
		{"a child's own deny rule narrows", agent.Config{Mode: agent.ModeBypass},
			&agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "write_file"}}}, write, "forbids this call", true},
		{"allowed by both: runs", agent.Config{Mode: agent.ModeBypass},
			&agent.Config{Mode: agent.ModeAcceptEdits}, write, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ws := workspace()
			p := newPerms(t, tc.parent)
			var results []llmtoolkit.Result
			cfg := agent.SubAgentConfig{
				Model: lt.NewScriptedModel(t, lt.CallTools(tc.call), lt.Reply("done")).Send,
				Tools: ws, AllowMutating: tc.mutating, Logger: quiet,
				OnEvent: func(_ string, e agentloop.Event) {
					if e.Kind == agentloop.EventToolResult {
						results = append(results, *e.Result)
					}
				},
			}
			if tc.child != nil {
				cfg.Permissions = newPerms(t, *tc.child)
			}
			spawn, err := agent.SpawnAgent(cfg)
			require.NoError(t, err)
			res := llmtoolkit.Execute(t.Context(), p.Guard(spawn), spawnCall("read the secret"))
			require.False(t, res.IsError, res.Content)
			require.Len(t, results, 1)
			if tc.wantIn == "" {
				assert.False(t, results[0].IsError, results[0].Content)
				assert.Len(t, ws.Calls(), 1)
				return
			}
			assert.True(t, results[0].IsError)
			assert.ErrorIs(t, results[0].Err, llmtoolkit.ErrDenied)
			assert.Contains(t, results[0].Content, tc.wantIn)
			assert.Empty(t, ws.Calls(), "the child's call never ran")
		})
	}
}

// TestModeSwitchesByVersion (row 7): a mode switch applies to every call
// made after it but those of the turn that made it: a sub-agent spawned in
// a later turn runs in the new mode (its own iteration counter restarts at
// 1), and a Permissions reused for a second run starts it in the current
// mode.
func TestModeSwitchesByVersion(t *testing.T) {
	approve := func(context.Context, string) agent.PlanDecision {
		return agent.PlanDecision{Approved: true, Mode: agent.ModeAcceptEdits}
	}
	t.Run("a sub-agent after the approval", func(t *testing.T) {
		p := newPerms(t, agent.Config{Mode: agent.ModePlan})
		ws := workspace()
		var results []llmtoolkit.Result
		spawn := newSpawn(t, agent.SubAgentConfig{
			Model: lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindEdit]), lt.Reply("written")).Send,
			Tools: p.Guard(ws), AllowMutating: true, // the wiring a host writes by hand
			OnEvent: func(_ string, e agentloop.Event) {
				if e.Kind == agentloop.EventToolResult {
					results = append(results, *e.Result)
				}
			},
		})
		model := lt.NewScriptedModel(t,
			lt.CallTools(kindCalls[agent.KindReadOnly]),
			lt.CallTools(planCall("1. write a.go")),
			lt.CallTools(spawnCall("write a.go")),
			lt.Reply("done"))
		_, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{
			Resolver: p.Guard(llmtoolkit.Compose(ws, agent.PlanMode(p, approve), spawn)), Logger: quiet})
		require.NoError(t, err)
		require.Len(t, history, 7)
		assert.False(t, history[5].IsError, history[5].Content)
		require.Len(t, results, 1)
		assert.False(t, results[0].IsError, "the child's write is checked in accept_edits, not the stale plan mode: %s", results[0].Content)
		assert.Len(t, ws.CallsTo("write_file"), 1)
	})
	t.Run("a sub-agent of the approving turn keeps the old mode", func(t *testing.T) {
		var p *agent.Permissions
		var childModes []agent.Mode
		p = newPerms(t, agent.Config{Mode: agent.ModePlan, CanUseTool: func(ctx context.Context, _ llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			if llmtoolkit.ScopeFrom(ctx).AgentID != "" {
				childModes = append(childModes, p.ModeAt(ctx))
			}
			return agent.Allow()
		}})
		ws := workspace()
		var results []llmtoolkit.Result
		spawn := newSpawn(t, agent.SubAgentConfig{
			Model: lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindReadOnly]), lt.Reply("read")).Send,
			Tools: ws,
			OnEvent: func(_ string, e agentloop.Event) {
				if e.Kind == agentloop.EventToolResult {
					results = append(results, *e.Result)
				}
			},
		})
		toDefault := func(context.Context, string) agent.PlanDecision {
			return agent.PlanDecision{Approved: true, Mode: agent.ModeDefault}
		}
		model := lt.NewScriptedModel(t, lt.CallTools(planCall("1. read"), spawnCall("read a.go")), lt.Reply("done"))
		_, _, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{
			Resolver: p.Guard(llmtoolkit.Compose(ws, agent.PlanMode(p, toDefault), spawn)), MaxParallel: 1, Logger: quiet})
		require.NoError(t, err)
		require.Len(t, results, 1)
		assert.False(t, results[0].IsError, results[0].Content)
		assert.Equal(t, []agent.Mode{agent.ModePlan}, childModes, "the child's call is checked in the mode of the turn that spawned it")
		assert.Equal(t, agent.ModeDefault, p.Mode())
	})
	t.Run("a Permissions reused for a second run", func(t *testing.T) {
		p := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits})
		ws := workspace()
		toPlan := llmtoolkit.MustTool("pause", "Back to planning.", schema(map[string]any{}))
		toPlan.Annotations = &llmtoolkit.Annotations{ReadOnly: true}
		tools := p.Guard(llmtoolkit.Compose(ws, (&lt.Fake{}).Add(toPlan, func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			return "planning", p.SetMode(ctx, agent.ModePlan)
		})))
		first := lt.NewScriptedModel(t, lt.CallTools(llmtoolkit.Call{Name: "pause", Arguments: map[string]any{}}), lt.Reply("paused"))
		_, _, err := agentloop.Run(t.Context(), nil, first.Send, agentloop.Options{Resolver: tools, Logger: quiet})
		require.NoError(t, err)
		require.Equal(t, agent.ModePlan, p.Mode())

		second := lt.NewScriptedModel(t, lt.CallTools(kindCalls[agent.KindEdit]), lt.Reply("done"))
		_, history, err := agentloop.Run(t.Context(), nil, second.Send, agentloop.Options{Resolver: tools, Logger: quiet})
		require.NoError(t, err)
		require.Len(t, history, 3)
		assert.True(t, history[1].IsError, "the second run is in plan mode from its first call: %s", history[1].Content)
		assert.Contains(t, history[1].Content, "plan mode allows only read-only tools")
		assert.Empty(t, ws.CallsTo("write_file"))
	})
}

// TestSubAgentBudget (row 14): a run's sub-agents, at every depth, are
// bounded in number and in how many run at once; the calls past the budget
// are refused with ErrSubAgentBudget.
func TestSubAgentBudget(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		total, concurrent     int // 0: the defaults
		wantTotal, wantAtOnce int
		deep                  bool // each child spawns one grandchild
	}{
		{"defaults", 0, 0, agent.DefaultMaxSubAgents, agent.DefaultMaxConcurrentSubAgents, false},
		{"configured", 5, 2, 5, 2, false},
		{"depth counts", 6, 3, 6, 3, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			started, running, peak := 0, 0, 0
			child := func(ctx context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
				mu.Lock()
				first := len(msgs) == 1
				if first {
					started++
					running++
					peak = max(peak, running)
				}
				mu.Unlock()
				if first && tc.deep && llmtoolkit.ScopeFrom(ctx).AgentID != "" && !strings.HasPrefix(msgs[0].Content, "grand") {
					return agentloop.Response{ToolCalls: []llmtoolkit.Call{spawnCall("grandchild")}}, nil
				}
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				running--
				mu.Unlock()
				return agentloop.Response{Content: "done"}, nil
			}
			_ = child
			var spawn llmtoolkit.Resolver
			inner := newSpawn(t, agent.SubAgentConfig{Model: func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
				msgs[0].Content = "grand " + msgs[0].Content
				return child(ctx, msgs, tools)
			}, MaxDepth: 2, MaxSubAgents: tc.total, MaxConcurrentSubAgents: tc.concurrent})
			spawn = newSpawn(t, agent.SubAgentConfig{Model: child, Tools: inner, MaxDepth: 2, MaxSubAgents: tc.total, MaxConcurrentSubAgents: tc.concurrent})
			calls := make([]llmtoolkit.Call, 40)
			for i := range calls {
				calls[i] = spawnCall(fmt.Sprint("task ", i))
				calls[i].ID = fmt.Sprint("s", i)
			}
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
			model := lt.NewScriptedModel(t, lt.CallTools(calls...), lt.Reply("all done"))
			_, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: p.Guard(spawn), MaxParallel: 40, BreakerThreshold: -1, Logger: quiet})
			require.NoError(t, err)
			refused := 0
			for _, m := range history[1:41] {
				if m.IsError {
					refused++
					assert.Contains(t, m.Content, "sub-agents")
				}
			}
			mu.Lock()
			defer mu.Unlock()
			assert.Equal(t, tc.wantTotal, started, "sub-agents started in the run, at every depth")
			assert.LessOrEqual(t, peak, tc.wantAtOnce)
			if !tc.deep {
				assert.Equal(t, 40-tc.wantTotal, refused)
			}
		})
	}
}

// TestHostCallbackPanics (row 9): a panic in any host callback fails the
// call (or, for a Stop hook, counts as not asking to go on), never the
// host, on whatever goroutine it runs: here two calls of one turn run in
// parallel on agentloop's goroutines, and a sub-agent's two calls on its
// own.
func TestHostCallbackPanics(t *testing.T) {
	boom := func() { panic("host bug") }
	read := kindCalls[agent.KindReadOnly]
	fail := llmtoolkit.MustTool("fail", "Fails.", schema(map[string]any{}))
	failing := (&lt.Fake{}).Add(fail, func(context.Context, llmtoolkit.Call) (string, error) { return "", fmt.Errorf("disk full") })
	ro := readOnlyTool("look", func(context.Context, llmtoolkit.Call) (string, error) { return "seen", nil })
	look := llmtoolkit.Call{Name: "look", Arguments: map[string]any{}}
	todo := todoCall(item("a", "pending"))
	for _, tc := range []struct {
		name   string
		build  func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions)
		call   llmtoolkit.Call
		wantIn string // in each result; "" for none (the Stop hook)
	}{
		{"PreToolUse hook", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{
				func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { boom(); return agent.Allow() }}}})
			return p.Guard(workspace()), p
		}, read, "a PreToolUse hook panicked"},
		{"PostToolUse hook", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{PostToolUse: []agent.PostToolUseHook{
				func(context.Context, llmtoolkit.Call, string) string { boom(); return "" }}}})
			return p.Guard(workspace()), p
		}, read, "a PostToolUse hook panicked"},
		{"PostToolUseFailure hook", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{PostToolUseFailure: []agent.PostToolUseFailureHook{
				func(context.Context, llmtoolkit.Call, error) { boom() }}}})
			return p.Guard(failing), p
		}, llmtoolkit.Call{Name: "fail", Arguments: map[string]any{}}, "disk full"},
		{"CanUseTool", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { boom(); return agent.Allow() }})
			return p.Guard(workspace()), p
		}, read, "the CanUseTool callback panicked"},
		{"ApprovePlan", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModePlan})
			return p.Guard(agent.PlanMode(p, func(context.Context, string) agent.PlanDecision { boom(); return agent.PlanDecision{} })), p
		}, planCall("1. x"), "host bug"},
		{"TodoConfig.OnChange", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
			return p.Guard(agent.NewTodos(agent.TodoConfig{Key: func(context.Context) (string, bool) { return "k", true },
				OnChange: func(context.Context, string, []agent.Todo) { boom() }})), p
		}, todo, "host bug"},
		{"SubAgentConfig.NewID", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
			return p.Guard(newSpawn(t, agent.SubAgentConfig{Model: lt.NewScriptedModel(t).Send, NewID: func() string { boom(); return "" }})), p
		}, spawnCall("x"), "host bug"},
		{"SubAgentConfig.OnEvent, on the child's goroutines", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass})
			child := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
				if len(msgs) == 1 {
					return agentloop.Response{ToolCalls: []llmtoolkit.Call{look, look}}, nil
				}
				return agentloop.Response{Content: "done"}, nil
			}
			return p.Guard(newSpawn(t, agent.SubAgentConfig{Model: child, Tools: ro,
				OnEvent: func(_ string, e agentloop.Event) {
					if e.Kind == agentloop.EventToolCall {
						boom()
					}
				}})), p
		}, spawnCall("x"), "OnEvent panicked: host bug"},
		{"Stop hook", func(t *testing.T) (llmtoolkit.Resolver, *agent.Permissions) {
			p := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{Stop: []agent.StopHook{
				func(context.Context, agentloop.Response) (string, bool) { boom(); return "", true }}}})
			return p.Guard(workspace()), p
		}, read, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, p := tc.build(t)
			model := lt.NewScriptedModel(t, lt.CallTools(tc.call, tc.call), lt.Reply("over"))
			resp, history, err := agentloop.Run(t.Context(), nil, model.Send, agentloop.Options{Resolver: r, Stop: p.Stop, BreakerThreshold: -1, Logger: quiet})
			require.NoError(t, err)
			assert.Equal(t, "over", resp.Content)
			require.Len(t, history, 4)
			for _, m := range history[1:3] {
				if tc.wantIn == "" {
					assert.False(t, m.IsError, m.Content)
					continue
				}
				assert.True(t, m.IsError)
				assert.Contains(t, m.Content, tc.wantIn)
			}
		})
	}
}
