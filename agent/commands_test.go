package agent_test

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// commandTools are tools that declare their commands in each way a tool
// can (llmtoolkit.Tool.Commands): bash's own command, another argument,
// a list, typed keys, all at once, and a bash that names its command
// otherwise. Typed keys are the lines "keys" holds, split at \r.
func commandTools() *lt.Fake {
	obj := map[string]any{"type": "object"}
	typed := func(_ context.Context, args map[string]any) ([]string, error) {
		keys, _ := args["keys"].(string)
		lines := strings.Split(keys, "\r")
		return lines[:len(lines)-1], nil // the text after the last \r is not entered
	}
	ok := func(_ context.Context, call llmtoolkit.Call) (string, error) { return "ran", nil }
	f := &lt.Fake{}
	for name, cmds := range map[string]*llmtoolkit.CommandArguments{
		"bash":     {Names: []string{"command"}},
		"exec":     {Names: []string{"cmd"}},
		"shell":    {Lists: []string{"commands"}},
		"terminal": {Typed: typed},
		"all":      {Names: []string{"cmd", "command"}, Lists: []string{"commands"}, Typed: typed},
	} {
		tool := llmtoolkit.MustTool(name, "Runs commands.", obj)
		tool.Commands = cmds
		f.Add(tool, ok)
	}
	return f
}

// FuzzRulesAndHooksSeeTheSameCommands is the differential check of the
// one reading of a call's commands: for any arguments of any tool that
// declares commands, a bash hook (a HookMatcher naming bash) sees exactly
// the command lines the declaration names (what the rules check, in the
// same order, each once), and a deny rule on bash's command and a bash
// hook refusing the same text refuse the same calls.
func FuzzRulesAndHooksSeeTheSameCommands(f *testing.F) {
	f.Add("bash", "rm -rf /", "", "", "rm")
	f.Add("exec", "ls; rm -rf x", "", "", "rm -rf")
	f.Add("shell", "", "echo a\nrm b\n\nc", "", "rm")
	f.Add("terminal", "", "", "echo a\rrm -r\x7ff\rpartial", "partial")
	f.Add("all", "one", "two\nthree", "four\rfive", "f")
	f.Add("all", "", "", "", "x")
	f.Add("bash", "", "", "", "")
	names := []string{"bash", "exec", "shell", "terminal", "all"}
	tools := commandTools()
	f.Fuzz(func(t *testing.T, name, command, list, keys, marker string) {
		if !slices.Contains(names, name) {
			name = names[len(name)%len(names)]
		}
		args := map[string]any{}
		if command != "" {
			args["cmd"], args["command"] = command, command
		}
		if list != "" {
			var cmds []any
			for _, l := range strings.Split(list, "\n") {
				cmds = append(cmds, l)
			}
			args["commands"] = cmds
		}
		if keys != "" {
			args["keys"] = keys
		}
		tool, _ := llmtoolkit.FindTool(tools, name)
		run, typed, err := tool.Commands.Lines(t.Context(), args)
		if err != nil {
			t.Fatal(err)
		}
		want := append(slices.Clip(run), typed...)

		// What a bash hook sees.
		var mu sync.Mutex
		var seen []string
		hook := func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			if call.Name != agent.BashToolName {
				t.Errorf("a bash hook saw %s", call.Name)
			}
			cmd, ok := call.Arguments[agent.BashCommandArgument].(string)
			if !ok {
				return agent.Allow() // bash's own call without a command: no command to see
			}
			mu.Lock()
			defer mu.Unlock()
			seen = append(seen, cmd)
			if marker != "" && strings.Contains(cmd, marker) {
				return agent.Deny("marked")
			}
			return agent.Allow()
		}
		byHook := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{Matched: []agent.HookMatcher{{Tool: "bash", PreToolUse: []agent.PreToolUseHook{hook}}}}}).Guard(tools)
		call := llmtoolkit.Call{ID: "c", Name: name, Arguments: args}
		_, hookErr := byHook.Resolve(t.Context(), call)
		if marker == "" || !slices.ContainsFunc(want, func(c string) bool { return strings.Contains(c, marker) }) {
			// Nothing refused: the hook saw every command, in order.
			if !slices.Equal(seen, want) && !(len(seen) == 0 && len(want) == 0) {
				t.Fatalf("%s %v: the bash hook saw %q, the declaration names %q", name, args, seen, want)
			}
		} else if !strings.Contains(strings.Join(seen, "\x00"), marker) {
			t.Fatalf("%s %v: refused before the marked command: saw %q of %q", name, args, seen, want)
		}

		// A deny rule on the same text refuses the same calls.
		if marker == "" || !utf8.ValidString(marker) {
			return // a rule's regexp is UTF-8
		}
		byRule := newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "bash", Argument: "command", Regexp: regexp.QuoteMeta(marker)}}}).Guard(tools)
		_, ruleErr := byRule.Resolve(t.Context(), call)
		if (hookErr != nil) != (ruleErr != nil) {
			t.Fatalf("%s %v (commands %q, marker %q): the hook says %v, the rule says %v", name, args, want, marker, hookErr, ruleErr)
		}
	})
}

// TestHookMatchers: a matcher's hooks see the calls of the tools it
// names; one that names bash ("bash", "*", "ba*") also sees the other
// tools' commands as bash's calls, after the call itself; one that does
// not ("exec") sees the call alone; a bash call is seen once; a bad
// pattern is refused.
func TestHookMatchers(t *testing.T) {
	tools := commandTools()
	for _, tc := range []struct {
		matcher string
		call    llmtoolkit.Call
		want    []string
	}{
		{"bash", llmtoolkit.Call{Name: "exec", Arguments: map[string]any{"cmd": "ls"}}, []string{"bash ls"}},
		{"*", llmtoolkit.Call{Name: "exec", Arguments: map[string]any{"cmd": "ls"}}, []string{"exec ls", "bash ls"}},
		{"", llmtoolkit.Call{Name: "shell", Arguments: map[string]any{"commands": []any{"a", "b"}}}, []string{"shell ", "bash a", "bash b"}},
		{"ba*", llmtoolkit.Call{Name: "terminal", Arguments: map[string]any{"keys": "x\ry\rz"}}, []string{"bash x", "bash y"}},
		{"exec", llmtoolkit.Call{Name: "exec", Arguments: map[string]any{"cmd": "ls"}}, []string{"exec ls"}},
		{"exec", llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "ls"}}, nil},
		{"bash", llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "ls"}}, []string{"bash ls"}},
		{"*", llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "ls"}}, []string{"bash ls"}},
		{"bash", llmtoolkit.Call{Name: "all", Arguments: map[string]any{"cmd": "a", "commands": []any{"b"}, "keys": "c\r"}}, []string{"bash a", "bash b", "bash c"}},
	} {
		t.Run(tc.matcher+" "+tc.call.Name, func(t *testing.T) {
			var pre, post []string
			seen := func(to *[]string, call llmtoolkit.Call) {
				cmd, _ := call.Arguments["cmd"].(string)
				if call.Name == "bash" {
					cmd, _ = call.Arguments["command"].(string)
				}
				*to = append(*to, call.Name+" "+cmd)
			}
			g := newPerms(t, agent.Config{Mode: agent.ModeBypass, Hooks: agent.Hooks{Matched: []agent.HookMatcher{{
				Tool: tc.matcher,
				PreToolUse: []agent.PreToolUseHook{func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
					seen(&pre, call)
					return agent.Allow()
				}},
				PostToolUse: []agent.PostToolUseHook{func(_ context.Context, call llmtoolkit.Call, content string) string {
					seen(&post, call)
					return content + "+"
				}},
			}}}}).Guard(tools)
			out, err := g.Resolve(t.Context(), tc.call)
			require.NoError(t, err)
			assert.Equal(t, tc.want, pre)
			assert.Equal(t, tc.want, post)
			assert.Equal(t, "ran"+strings.Repeat("+", len(tc.want)), out, "each PostToolUse hook gets the content the previous returned")
		})
	}
	_, err := agent.New(agent.Config{Hooks: agent.Hooks{Matched: []agent.HookMatcher{{Tool: "[bash"}}}})
	require.ErrorIs(t, err, agent.ErrInvalidConfig)
}
