package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
)

// TestModeByKind runs every kind of call in every mode, with a callback
// that refuses everything it is asked: what runs, what is refused by the
// mode, and what reaches the callback.
func TestModeByKind(t *testing.T) {
	type outcome string
	const (
		runs    outcome = "runs"    // allowed without asking
		asked   outcome = "asked"   // the callback was asked (and refused)
		denied  outcome = "denied"  // refused by the mode
		unknown outcome = "unknown" // allowed, and the resolver does not know the tool
	)
	want := map[agent.Mode]map[agent.Kind]outcome{
		agent.ModeDefault:     {agent.KindReadOnly: asked, agent.KindEdit: asked, agent.KindOther: asked, agent.KindUnknown: asked},
		agent.ModePlan:        {agent.KindReadOnly: asked, agent.KindEdit: denied, agent.KindOther: denied, agent.KindUnknown: denied},
		agent.ModeAcceptEdits: {agent.KindReadOnly: runs, agent.KindEdit: runs, agent.KindOther: asked, agent.KindUnknown: asked},
		agent.ModeBypass:      {agent.KindReadOnly: runs, agent.KindEdit: runs, agent.KindOther: runs, agent.KindUnknown: unknown},
	}
	for mode, byKind := range want {
		for kind, out := range byKind {
			t.Run(fmt.Sprintf("%s/%s", mode, kind), func(t *testing.T) {
				var asks []string
				p := newPerms(t, agent.Config{Mode: mode, CanUseTool: func(_ context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) agent.Decision {
					assert.Equal(t, call.Name, tool.Name)
					asks = append(asks, call.Name)
					return agent.Deny("the user said no")
				}})
				ws := workspace()
				res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[kind])
				switch out {
				case runs:
					require.False(t, res.IsError, res.Content)
					assert.Equal(t, kindCalls[kind].Name+" ran", res.Content)
					assert.Empty(t, asks)
				case asked:
					require.True(t, res.IsError)
					assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
					assert.Contains(t, res.Content, "the user said no")
					assert.Equal(t, []string{kindCalls[kind].Name}, asks)
					assert.Empty(t, ws.Calls(), "a refused call never reaches the tool")
				case denied:
					require.True(t, res.IsError)
					assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
					assert.Contains(t, res.Content, "plan mode allows only read-only tools")
					assert.Empty(t, asks)
					assert.Empty(t, ws.Calls())
				case unknown:
					require.True(t, res.IsError)
					assert.ErrorIs(t, res.Err, llmtoolkit.ErrUnknownTool)
					assert.NotErrorIs(t, res.Err, llmtoolkit.ErrDenied)
				}
			})
		}
	}
}

func TestKind(t *testing.T) {
	p := newPerms(t, agent.Config{EditTools: []string{"patch"}})
	ro := llmtoolkit.Tool{Name: "patch", Annotations: &llmtoolkit.Annotations{ReadOnly: true}}
	assert.Equal(t, agent.KindReadOnly, p.Kind(ro), "the annotation wins")
	assert.Equal(t, agent.KindEdit, p.Kind(llmtoolkit.Tool{Name: "patch"}))
	assert.Equal(t, agent.KindOther, p.Kind(llmtoolkit.Tool{Name: "write_file"}), "EditTools replaces the default list")
	def := newPerms(t, agent.Config{})
	for _, n := range agent.DefaultEditTools {
		assert.Equal(t, agent.KindEdit, def.Kind(llmtoolkit.Tool{Name: n}))
	}
}

// TestCheckOrder proves the documented order: mode, deny rules, allow
// rules, hooks, callback. Each case sets up several steps that could decide
// the call and checks which one did, and what ran before it.
func TestCheckOrder(t *testing.T) {
	bashRule := []agent.Rule{{Tool: "bash"}}
	hook := func(trail *[]string, d agent.Decision) agent.Hooks {
		return agent.Hooks{PreToolUse: []agent.PreToolUseHook{func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			*trail = append(*trail, "hook")
			return d
		}}}
	}
	callback := func(trail *[]string) agent.CanUseTool {
		return func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			*trail = append(*trail, "callback")
			return agent.Deny("callback says no")
		}
	}
	for _, tc := range []struct {
		name      string
		cfg       func(trail *[]string) agent.Config
		wantIn    string // in the refusal; "" means the call ran
		wantTrail []string
	}{
		{"the mode comes first", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModePlan, Deny: bashRule, Allow: bashRule, Hooks: hook(tr, agent.Deny("hook says no")), CanUseTool: callback(tr)}
		}, "plan mode", nil},
		{"deny rules before allow rules, hooks and callback", func(tr *[]string) agent.Config {
			return agent.Config{Deny: bashRule, Allow: bashRule, Hooks: hook(tr, agent.Deny("hook says no")), CanUseTool: callback(tr)}
		}, `the host's rule bash forbids this call`, nil},
		{"an allow rule skips the callback, not the hooks", func(tr *[]string) agent.Config {
			return agent.Config{Allow: bashRule, Hooks: hook(tr, agent.Allow()), CanUseTool: callback(tr)}
		}, "", []string{"hook"}},
		{"hooks before the callback", func(tr *[]string) agent.Config {
			return agent.Config{Hooks: hook(tr, agent.Deny("hook says no")), CanUseTool: callback(tr)}
		}, "hook says no", []string{"hook"}},
		{"the callback last", func(tr *[]string) agent.Config {
			return agent.Config{Hooks: hook(tr, agent.Allow()), CanUseTool: callback(tr)}
		}, "callback says no", []string{"hook", "callback"}},
		{"bypass skips the callback, not the hooks", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Hooks: hook(tr, agent.Allow()), CanUseTool: callback(tr)}
		}, "", []string{"hook"}},
		{"bypass keeps the deny rules", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModeBypass, Deny: bashRule, Hooks: hook(tr, agent.Allow()), CanUseTool: callback(tr)}
		}, `the host's rule bash forbids this call`, nil},
		{"accept_edits asks for bash", func(tr *[]string) agent.Config {
			return agent.Config{Mode: agent.ModeAcceptEdits, Hooks: hook(tr, agent.Allow()), CanUseTool: callback(tr)}
		}, "callback says no", []string{"hook", "callback"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var trail []string
			p := newPerms(t, tc.cfg(&trail))
			res := llmtoolkit.Execute(t.Context(), p.Guard(workspace()), kindCalls[agent.KindOther])
			if tc.wantIn == "" {
				require.False(t, res.IsError, res.Content)
			} else {
				require.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
				assert.Contains(t, res.Content, tc.wantIn)
				assert.Contains(t, res.Content, `permission denied: tool "bash" was not run`)
			}
			assert.Equal(t, tc.wantTrail, trail)
		})
	}
}

func TestDenyRuleBeatsAllowRule(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allow, deny agent.Rule
		call        llmtoolkit.Call
		wantDenied  bool
	}{
		{
			name:       "same tool, deny by regexp",
			allow:      agent.Rule{Tool: "bash"},
			deny:       agent.Rule{Tool: "bash", Argument: "command", Regexp: `(^|[;&|]\s*)rm\s`},
			call:       llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "go test ./... && rm -rf /"}},
			wantDenied: true,
		},
		{
			name:       "path glob: a write under docs allowed, under docs/secret denied",
			allow:      agent.Rule{Tool: "write_file", Argument: "path", Glob: "docs/**"},
			deny:       agent.Rule{Tool: "write_file", Argument: "path", Glob: "docs/secret/**"},
			call:       llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "docs/secret/key.txt", "content": "x"}},
			wantDenied: true,
		},
		{
			name:       "dot-dot cannot climb out of a deny glob's reach",
			allow:      agent.Rule{Tool: "*"},
			deny:       agent.Rule{Tool: "write_file", Argument: "path", Glob: ".git/**"},
			call:       llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "src/../.git/config", "content": "x"}},
			wantDenied: true,
		},
		{
			name:  "no deny match: the allow rule decides",
			allow: agent.Rule{Tool: "write_file", Argument: "path", Glob: "docs/**"},
			deny:  agent.Rule{Tool: "write_file", Argument: "path", Glob: "docs/secret/**"},
			call:  llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "docs/guide.md", "content": "x"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			p := newPerms(t, agent.Config{Allow: []agent.Rule{tc.allow}, Deny: []agent.Rule{tc.deny},
				CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
					asked = true
					return agent.Deny("asked")
				}})
			res := llmtoolkit.Execute(t.Context(), p.Guard(workspace()), tc.call)
			assert.False(t, asked, "either rule decides without the callback")
			if tc.wantDenied {
				require.True(t, res.IsError)
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
				assert.Contains(t, res.Content, "forbids this call")
			} else {
				require.False(t, res.IsError, res.Content)
			}
		})
	}
}

func TestRuleMatching(t *testing.T) {
	call := func(name string, args map[string]any) llmtoolkit.Call {
		return llmtoolkit.Call{Name: name, Arguments: args}
	}
	for _, tc := range []struct {
		name string
		rule agent.Rule
		call llmtoolkit.Call
		want bool
	}{
		{"any tool", agent.Rule{}, call("bash", nil), true},
		{"star", agent.Rule{Tool: "*"}, call("bash", nil), true},
		{"name glob", agent.Rule{Tool: "mcp_*"}, call("mcp_fetch", nil), true},
		{"other name", agent.Rule{Tool: "bash"}, call("grep", nil), false},
		{"missing argument", agent.Rule{Tool: "bash", Argument: "command", Regexp: "."}, call("bash", nil), false},
		{"number by its JSON text", agent.Rule{Tool: "bash", Argument: "command", Regexp: "."}, call("bash", map[string]any{"command": 3.0}), true},
		{"number zero", agent.Rule{Argument: "n", Regexp: "^0$"}, call("bash", map[string]any{"n": 0.0}), true},
		{"integer zero", agent.Rule{Argument: "n", Regexp: "^0$"}, call("bash", map[string]any{"n": 0}), true},
		{"json number", agent.Rule{Argument: "n", Regexp: "^0$"}, call("bash", map[string]any{"n": json.Number("0")}), true},
		{"other number", agent.Rule{Argument: "n", Regexp: "^0$"}, call("bash", map[string]any{"n": 10.0}), false},
		{"boolean", agent.Rule{Argument: "force", Regexp: "^true$"}, call("bash", map[string]any{"force": true}), true},
		{"null", agent.Rule{Argument: "x", Regexp: "^null$"}, call("bash", map[string]any{"x": nil}), true},
		{"array element", agent.Rule{Argument: "paths", Glob: "secrets/**"}, call("bash", map[string]any{"paths": []any{"a", "x/../secrets/k"}}), true},
		{"array no element", agent.Rule{Argument: "paths", Glob: "secrets/**"}, call("bash", map[string]any{"paths": []any{"a", "b"}}), false},
		{"nested array element", agent.Rule{Argument: "n", Regexp: "^0$"}, call("bash", map[string]any{"n": []any{1.0, []any{0.0}}}), true},
		{"object by its JSON text", agent.Rule{Argument: "o", Regexp: `"rm"`}, call("bash", map[string]any{"o": map[string]any{"cmd": "rm"}}), true},
		{"regexp unanchored", agent.Rule{Argument: "command", Regexp: "rm"}, call("bash", map[string]any{"command": "ls; rm x"}), true},
		{"regexp anchored", agent.Rule{Argument: "command", Regexp: "^go test( |$)"}, call("bash", map[string]any{"command": "xgo test"}), false},
		{"glob double star", agent.Rule{Argument: "path", Glob: "**/*.go"}, call("write_file", map[string]any{"path": "a/b/c.go"}), true},
		{"glob cleaned", agent.Rule{Argument: "path", Glob: "src/**"}, call("write_file", map[string]any{"path": "src/../etc/passwd"}), false},
		{"glob backslashes", agent.Rule{Argument: "path", Glob: "src/**"}, call("write_file", map[string]any{"path": `src\a.go`}), true},
		{"glob and regexp both", agent.Rule{Argument: "path", Glob: "**/*.go", Regexp: "_test"}, call("write_file", map[string]any{"path": "a/b.go"}), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPerms(t, agent.Config{Mode: agent.ModeDefault, Deny: []agent.Rule{tc.rule}})
			r := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) { return "ran", nil })
			out, err := p.Guard(r).Resolve(t.Context(), tc.call)
			if tc.want {
				assert.ErrorIs(t, err, llmtoolkit.ErrDenied)
			} else {
				require.NoError(t, err)
				assert.Equal(t, "ran", out)
			}
		})
	}
}

func TestNewRefusesBadConfig(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  agent.Config
	}{
		{"unknown mode", agent.Config{Mode: "yolo"}},
		{"argument without pattern", agent.Config{Deny: []agent.Rule{{Tool: "bash", Argument: "command"}}}},
		{"pattern without argument", agent.Config{Allow: []agent.Rule{{Tool: "bash", Regexp: "x"}}}},
		{"bad regexp", agent.Config{Deny: []agent.Rule{{Argument: "command", Regexp: "("}}}},
		{"bad glob", agent.Config{Deny: []agent.Rule{{Argument: "path", Glob: "[a"}}}},
		{"bad tool glob", agent.Config{Allow: []agent.Rule{{Tool: "[x"}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := agent.New(tc.cfg)
			assert.ErrorIs(t, err, agent.ErrInvalidConfig)
		})
	}
}

func TestCallbackCanRewriteArguments(t *testing.T) {
	ws := workspace()
	p := newPerms(t, agent.Config{
		Deny: []agent.Rule{{Tool: "write_file", Argument: "path", Glob: "/etc/**"}},
		CanUseTool: func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			args := map[string]any{}
			for k, v := range call.Arguments {
				args[k] = v
			}
			args["path"] = "sandbox/" + args["path"].(string)
			return agent.AllowWith(args)
		},
	})
	res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[agent.KindEdit])
	require.False(t, res.IsError, res.Content)
	require.Len(t, ws.Calls(), 1)
	assert.Equal(t, "sandbox/a.go", ws.Calls()[0].Arguments["path"], "the tool runs with the callback's arguments")
}

func TestCallbackRewriteIsCheckedAgainstDenyRules(t *testing.T) {
	ws := workspace()
	p := newPerms(t, agent.Config{
		Deny: []agent.Rule{{Tool: "write_file", Argument: "path", Glob: "/etc/**"}},
		CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
			return agent.AllowWith(map[string]any{"path": "/etc/passwd", "content": "x"})
		},
	})
	res := llmtoolkit.Execute(t.Context(), p.Guard(ws), kindCalls[agent.KindEdit])
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, "with the arguments set by the host")
	assert.Empty(t, ws.Calls())
}

func TestCallbackPanicFailsTheCallOnly(t *testing.T) {
	p := newPerms(t, agent.Config{CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision { panic("boom") }})
	res := llmtoolkit.Execute(t.Context(), p.Guard(workspace()), kindCalls[agent.KindOther])
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrToolPanic)
	assert.NotErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.Contains(t, res.Content, "the CanUseTool callback panicked: boom")
}

func TestGuardIsSafeForConcurrentCalls(t *testing.T) {
	p := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Allow: []agent.Rule{{Tool: "bash", Argument: "command", Regexp: "^go test"}}})
	g := p.Guard(workspace())
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			kind := []agent.Kind{agent.KindReadOnly, agent.KindEdit, agent.KindOther}[i%3]
			res := llmtoolkit.Execute(context.Background(), g, kindCalls[kind])
			assert.False(t, res.IsError, res.Content)
			if i == 10 {
				assert.NoError(t, p.SetMode(context.Background(), agent.ModeAcceptEdits))
			}
		})
	}
	wg.Wait()
}

// TestAllowRulesNeedEveryElement: an allow rule matches an array only when
// every element does, so one allowed element cannot carry a denied one
// past the callback; a number is matched by its JSON text.
func TestAllowRulesNeedEveryElement(t *testing.T) {
	for _, tc := range []struct {
		name  string
		value any
		asked bool
	}{
		{"every element allowed", []any{"go test ./a", "go test ./b"}, false},
		{"one element not allowed", []any{"go test ./a", "rm -rf /"}, true},
		{"empty array", []any{}, true},
		{"a number", 7.0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := false
			p := newPerms(t, agent.Config{
				Allow: []agent.Rule{{Argument: "commands", Regexp: `^go test [./a-z]+$`}},
				CanUseTool: func(context.Context, llmtoolkit.Call, llmtoolkit.Tool) agent.Decision {
					asked = true
					return agent.Allow()
				},
			})
			r := llmtoolkit.ResolverFunc(func(context.Context, llmtoolkit.Call) (string, error) { return "ran", nil })
			_, err := p.Guard(r).Resolve(t.Context(), llmtoolkit.Call{Name: "batch", Arguments: map[string]any{"commands": tc.value}})
			require.NoError(t, err)
			assert.Equal(t, tc.asked, asked)
		})
	}
}
