package agent_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestBashHookSeesEveryCommand: a PreToolUse hook under a matcher naming
// bash that refuses a command refuses it whatever tool runs it or types
// it: bash, bash in the background, the persistent bash
// (WithBashSession), exec_command (with and without a terminal), shell,
// and a line write_stdin enters into a terminal; nothing runs. The same
// hook lets other commands through, seeing each exactly once as bash's
// call; its PostToolUse hook sees them too; the hooks on every call see
// each call under its own name, as before.
func TestBashHookSeesEveryCommand(t *testing.T) {
	dir := t.TempDir()
	code, err := codetools.New(dir, codetools.WithBackgroundJobs(), codetools.WithTerminals(), codetools.WithShell())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	persistent, err := codetools.New(dir, codetools.WithBashSession())
	require.NoError(t, err)
	t.Cleanup(func() { persistent.Close() })

	var mu sync.Mutex
	var pre, post, plain []string // what the bash hooks saw ("tool: command"), what the hook on every call saw
	perms := newPerms(t, agent.Config{
		Mode: agent.ModeBypass,
		Hooks: agent.Hooks{
			PreToolUse: []agent.PreToolUseHook{func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
				mu.Lock()
				defer mu.Unlock()
				plain = append(plain, call.Name)
				return agent.Allow()
			}},
			Matched: []agent.HookMatcher{{
				Tool: "bash",
				PreToolUse: []agent.PreToolUseHook{func(_ context.Context, call llmtoolkit.Call, tool llmtoolkit.Tool) agent.Decision {
					require.Equal(t, agent.BashToolName, call.Name)
					cmd, _ := call.Arguments[agent.BashCommandArgument].(string)
					mu.Lock()
					pre = append(pre, tool.Name+": "+cmd)
					mu.Unlock()
					if strings.Contains(cmd, "pwned") {
						return agent.Deny("no pwning")
					}
					return agent.Allow()
				}},
				PostToolUse: []agent.PostToolUseHook{func(_ context.Context, call llmtoolkit.Call, content string) string {
					mu.Lock()
					defer mu.Unlock()
					post = append(post, call.Arguments[agent.BashCommandArgument].(string))
					return content
				}},
			}},
		},
	})
	tools, session := perms.Guard(code), perms.Guard(persistent)
	reset := func() { mu.Lock(); pre, post, plain = nil, nil, nil; mu.Unlock() }
	seen := func() (a, b, c []string) { mu.Lock(); defer mu.Unlock(); return pre, post, plain }

	// A terminal running bash, to type into.
	res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "t", Name: "exec_command", Arguments: map[string]any{"cmd": "bash", "tty": true, "yield_time_ms": 300}})
	require.False(t, res.IsError, res.Content)
	sid := idIn(t, `session ID (\d+)`, res.Content)
	res = llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "w", Name: "write_stdin", Arguments: map[string]any{"session_id": sid, "chars": "touch pwn"}})
	require.False(t, res.IsError, "no Enter: nothing entered yet: %s", res.Content)

	marker := filepath.Join(dir, "pwned")
	for _, tc := range []struct {
		name string
		r    llmtoolkit.Resolver
		tool string
		args map[string]any
		fine map[string]any // the same call with a harmless command
	}{
		{"bash", tools, "bash", map[string]any{"command": "touch pwned"}, map[string]any{"command": "echo fine"}},
		{"bash in the background", tools, "bash", map[string]any{"command": "touch pwned", "run_in_background": true}, map[string]any{"command": "echo fine", "run_in_background": true}},
		{"persistent bash", session, "bash", map[string]any{"command": "touch pwned"}, map[string]any{"command": "echo fine"}},
		{"exec_command", tools, "exec_command", map[string]any{"cmd": "touch pwned"}, map[string]any{"cmd": "echo fine"}},
		{"exec_command on a terminal", tools, "exec_command", map[string]any{"cmd": "touch pwned", "tty": true}, map[string]any{"cmd": "echo fine", "tty": true}},
		{"shell", tools, codetools.ShellName, map[string]any{"commands": []any{"echo fine", "touch pwned"}}, map[string]any{"commands": []any{"echo fine"}}},
		{"write_stdin", tools, "write_stdin", map[string]any{"session_id": sid, "chars": "ed\r"}, map[string]any{"session_id": sid, "chars": "\x15echo fine\r"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reset()
			res := llmtoolkit.Execute(t.Context(), tc.r, llmtoolkit.Call{ID: "c", Name: tc.tool, Arguments: tc.args})
			require.True(t, res.IsError, res.Content)
			require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, "no pwning")
			assert.NoFileExists(t, marker)
			p, _, _ := seen()
			assert.Contains(t, p, tc.tool+": touch pwned", "typed over two calls, the line as the terminal has it")

			reset()
			res = llmtoolkit.Execute(t.Context(), tc.r, llmtoolkit.Call{ID: "c", Name: tc.tool, Arguments: tc.fine})
			require.False(t, res.IsError, res.Content)
			p, q, all := seen()
			assert.Equal(t, []string{tc.tool + ": echo fine"}, p, "each command seen once, as bash's")
			assert.Equal(t, []string{"echo fine"}, q, "the PostToolUse hook sees the commands too")
			assert.Equal(t, []string{tc.tool}, all, "the hooks on every call see the call under its name")
		})
	}
	assert.NoFileExists(t, marker)
}

// TestBashHookCannotRewriteAnotherToolsCommand: a bash hook that changes
// a command of exec_command refuses the call (its arguments cannot be
// rewritten from bash's); on bash itself the change applies; a hook
// returning the command unchanged lets the call run.
func TestBashHookCannotRewriteAnotherToolsCommand(t *testing.T) {
	dir := t.TempDir()
	code, err := codetools.New(dir, codetools.WithTerminals())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	rewrite := func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
		args := call.Arguments
		if args["command"] == "echo same" {
			return agent.AllowWith(args)
		}
		args["command"] = "echo rewritten"
		return agent.AllowWith(args)
	}
	tools := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{Matched: []agent.HookMatcher{{Tool: "bash", PreToolUse: []agent.PreToolUseHook{rewrite}}}}}).Guard(code)
	res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "x", Name: "exec_command", Arguments: map[string]any{"cmd": "echo original"}})
	require.ErrorIs(t, res.Err, llmtoolkit.ErrDenied, res.Content)
	assert.Contains(t, res.Content, "cannot be applied to exec_command's arguments")
	res = llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "x", Name: "exec_command", Arguments: map[string]any{"cmd": "echo same"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "same")
	res = llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "b", Name: "bash", Arguments: map[string]any{"command": "echo original"}})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "rewritten")
}
