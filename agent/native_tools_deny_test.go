package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestNativeToolsHoldDenyInEveryShape: a deny rule on a path, and plan
// mode, hold through every trained tool (the text editor, memory,
// apply_patch) whatever provider shape the model's call came in: the call
// is read from an Anthropic tool_use block, a Responses function_call item
// and a Chat Completions tool call, then run through the guard. Nothing is
// written and the secret is not shown.
func TestNativeToolsHoldDenyInEveryShape(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "notes", "private"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", "key"), []byte("KEY\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes", "private", "p.md"), []byte("KEY\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes", "open.md"), []byte("open\n"), 0o644))
	require.NoError(t, os.Symlink("secrets", filepath.Join(dir, "alias")))
	code, err := codetools.New(dir, codetools.WithTextEditor(0), codetools.WithMemory("notes"), codetools.WithApplyPatch())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })

	calls := []struct {
		name string
		args map[string]any
	}{
		{codetools.TextEditorName, map[string]any{"command": "view", "path": "alias/key"}},
		{codetools.TextEditorName, map[string]any{"command": "str_replace", "path": "secrets/key", "old_str": "KEY", "new_str": "X"}},
		{codetools.TextEditorName, map[string]any{"command": "create", "path": "alias/new", "file_text": "x"}},
		{codetools.TextEditorName, map[string]any{"command": "insert", "path": "secrets/key", "insert_line": 0, "insert_text": "x"}},
		{"memory", map[string]any{"command": "view", "path": "/memories/private/p.md"}},
		{"memory", map[string]any{"command": "create", "path": "/memories/private/new.md", "file_text": "x"}},
		{"memory", map[string]any{"command": "delete", "path": "/memories/private"}},
		{"memory", map[string]any{"command": "rename", "old_path": "/memories/open.md", "new_path": "/memories/private/open.md"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: secrets/key\n@@\n-KEY\n+X\n*** End Patch"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Delete File: alias/key\n*** End Patch"}},
		{"apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: notes/open2.md\n+x\n*** Add File: secrets/new\n+x\n*** End Patch"}},
	}
	shapes := map[string]func(t *testing.T, name, args string) []llmtoolkit.Call{
		"anthropic tool_use": func(t *testing.T, name, args string) []llmtoolkit.Call {
			body := `{"content":[{"type":"tool_use","id":"toolu_1","name":` + quote(name) + `,"input":` + args + `}],"stop_reason":"tool_use"}`
			return responseCalls(t, provider.AnthropicResponse, body)
		},
		"responses function_call": func(t *testing.T, name, args string) []llmtoolkit.Call {
			body := `{"output":[{"type":"function_call","call_id":"call_1","name":` + quote(name) + `,"arguments":` + quote(args) + `}]}`
			return responseCalls(t, provider.OpenAIResponsesResponse, body)
		},
		"chat tool_calls": func(t *testing.T, name, args string) []llmtoolkit.Call {
			body := `{"choices":[{"message":{"role":"assistant","tool_calls":[{"id":"call_1","type":"function","function":{"name":` +
				quote(name) + `,"arguments":` + quote(args) + `}}]},"finish_reason":"tool_calls"}]}`
			return responseCalls(t, provider.OpenAIResponse, body)
		},
	}
	guards := map[string]*agent.Permissions{
		"deny": newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Deny: []agent.Rule{
			{Tool: "*", Argument: "path", Glob: "secrets/**"}, {Tool: "*", Argument: "path", Glob: "notes/private/**"},
			{Tool: "*", Argument: "path", Glob: "notes/private"}}}),
		"plan": newPerms(t, agent.Config{Mode: agent.ModePlan}),
	}
	for shape, read := range shapes {
		for guard, p := range guards {
			for _, c := range calls {
				if guard == "plan" && c.args["command"] == "view" {
					continue // plan mode lets a model read
				}
				args, err := json.Marshal(c.args)
				require.NoError(t, err)
				t.Run(shape+"/"+guard+"/"+c.name+"/"+string(args), func(t *testing.T) {
					got := read(t, c.name, string(args))
					require.Len(t, got, 1)
					assert.Equal(t, c.name, got[0].Name)
					res := llmtoolkit.Execute(t.Context(), p.Guard(code), got[0])
					require.True(t, res.IsError, res.Content)
					assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
					assert.NotContains(t, res.Content, "KEY")
				})
			}
		}
	}
	assert.Equal(t, "KEY\n", readFile(t, filepath.Join(dir, "secrets", "key")))
	assert.Equal(t, "KEY\n", readFile(t, filepath.Join(dir, "notes", "private", "p.md")))
	assert.Equal(t, "open\n", readFile(t, filepath.Join(dir, "notes", "open.md")))
	for _, p := range []string{"secrets/new", "notes/private/new.md", "notes/private/open.md", "notes/open2.md"} {
		assert.NoFileExists(t, filepath.Join(dir, p))
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func responseCalls(t *testing.T, read func(json.RawMessage) (agentloop.Response, error), body string) []llmtoolkit.Call {
	t.Helper()
	resp, err := read(json.RawMessage(body))
	require.NoError(t, err, body)
	return resp.ToolCalls
}

// TestResponsesNativeToolsHoldDeny: the same through the Responses API's
// own shapes: an apply_patch_call's operation on a denied path (a create,
// an update, a delete through a link) and a shell_call whose second
// command a deny rule on bash's command matches are refused, under a deny
// rule and under plan mode; nothing runs, and the refusal is answered in
// the native items (apply_patch_call_output "failed", shell_call_output).
func TestResponsesNativeToolsHoldDeny(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", "key"), []byte("KEY\n"), 0o644))
	require.NoError(t, os.Symlink("secrets", filepath.Join(dir, "alias")))
	code, err := codetools.New(dir, codetools.WithModelTools("gpt-5.1-codex", ""))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })

	items := []string{
		`{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":{"type":"update_file","path":"secrets/key","diff":"@@\n-KEY\n+X\n"}}`,
		`{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":{"type":"create_file","path":"alias/new","diff":"+x\n"}}`,
		`{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":{"type":"delete_file","path":"alias/key"}}`,
		`{"type":"shell_call","id":"sh_1","call_id":"call_1","status":"completed","action":{"commands":["touch ran","rm -rf secrets"],"timeout_ms":null,"max_output_length":null}}`,
	}
	guards := map[string]*agent.Permissions{
		"deny": newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{
			{Tool: "*", Argument: "path", Glob: "secrets/**"}, {Tool: "bash", Argument: "command", Regexp: `\brm\b`}}}),
		"plan": newPerms(t, agent.Config{Mode: agent.ModePlan}),
	}
	for guard, p := range guards {
		for _, item := range items {
			t.Run(guard+"/"+item, func(t *testing.T) {
				resp, err := provider.OpenAIResponsesResponse(json.RawMessage(`{"status":"completed","output":[` + item + `]}`))
				require.NoError(t, err)
				require.Len(t, resp.ToolCalls, 1)
				call := resp.ToolCalls[0]
				require.Nil(t, call.Malformed)
				res := llmtoolkit.Execute(t.Context(), p.Guard(code), call)
				require.True(t, res.IsError, res.Content)
				assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
				out, err := json.Marshal(provider.OpenAIResponsesCallOutput(call, res))
				require.NoError(t, err)
				if call.Name == "apply_patch" {
					assert.Contains(t, string(out), `"type":"apply_patch_call_output"`)
					assert.Contains(t, string(out), `"status":"failed"`)
				} else {
					assert.Contains(t, string(out), `"type":"shell_call_output"`)
					assert.Contains(t, string(out), `"exit_code":1`)
				}
			})
		}
	}
	assert.Equal(t, "KEY\n", readFile(t, filepath.Join(dir, "secrets", "key")))
	for _, p := range []string{"secrets/new", "ran"} {
		assert.NoFileExists(t, filepath.Join(dir, p))
	}
}

// TestAnthropicNativeBashHoldsDeny: bash as Claude's bash_20250124 (the
// persistent session of WithModelTools) is checked as bash: a deny rule
// on its command refuses a tool_use block that runs it, plan mode refuses
// every command, and nothing runs in the session.
func TestAnthropicNativeBashHoldsDeny(t *testing.T) {
	dir := t.TempDir()
	code, err := codetools.New(dir, codetools.WithModelTools("claude-sonnet-4-5", ""))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	tool, ok := code.LookupTool("bash")
	require.True(t, ok)
	require.Equal(t, codetools.NativeBash, tool.Native)
	guards := map[string]*agent.Permissions{
		"deny": newPerms(t, agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "bash", Argument: "command", Regexp: `\brm\b`}}}),
		"plan": newPerms(t, agent.Config{Mode: agent.ModePlan}),
	}
	for guard, p := range guards {
		body := `{"content":[{"type":"tool_use","id":"toolu_1","name":"bash","input":{"command":"touch ran; rm -f x"}}],"stop_reason":"tool_use"}`
		calls := responseCalls(t, provider.AnthropicResponse, body)
		require.Len(t, calls, 1)
		res := llmtoolkit.Execute(t.Context(), p.Guard(code), calls[0])
		require.True(t, res.IsError, "%s: %s", guard, res.Content)
		assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied, guard)
	}
	assert.NoFileExists(t, filepath.Join(dir, "ran"))
}
