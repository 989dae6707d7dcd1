package skills_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
	"github.com/llmtoolkit/llmtoolkit/skills"
)

// wireBody writes one request body in a provider's format.
type wireBody func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) []byte

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := provider.MarshalRequest(v)
	require.NoError(t, err)
	return b
}

var wires = map[string]wireBody{
	"anthropic": func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		system, msgs, err := provider.AnthropicMessages(h)
		require.NoError(t, err)
		return marshal(t, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "system": system, "messages": msgs, "tools": provider.AnthropicTools(tools)})
	},
	"openai-chat": func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		msgs, err := provider.OpenAIMessages(h)
		require.NoError(t, err)
		return marshal(t, map[string]any{"model": "gpt-4.1", "messages": msgs, "tools": provider.OpenAITools(tools)})
	},
	"openai-responses": func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		input, err := provider.OpenAIResponsesInput(h)
		require.NoError(t, err)
		return marshal(t, map[string]any{"model": "gpt-5.4", "input": input, "tools": provider.OpenAIResponsesTools(tools), "store": false})
	},
	"gemini": func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		system, contents, err := provider.GeminiContents(h)
		require.NoError(t, err)
		return marshal(t, map[string]any{"systemInstruction": system, "contents": contents, "tools": provider.GeminiTools(tools)})
	},
}

// sandboxedTools returns codetools in root, bash sandboxed with the
// skills' folders readable, or skips (fails under CI) without a backend.
func sandboxedTools(t *testing.T, root string, readable []string) *codetools.CodeTools {
	t.Helper()
	ct, err := codetools.New(root, codetools.WithSandbox(codetools.SandboxPolicy{Mode: codetools.SandboxWorkspaceWrite, Readable: readable}), codetools.WithSandboxRequired())
	if err != nil {
		if os.Getenv("CI") == "true" && runtime.GOOS == "linux" {
			t.Fatalf("no sandbox backend under CI: %v", err)
		}
		t.Skipf("no sandbox backend on this machine: %v", err)
	}
	t.Cleanup(func() { ct.Close() })
	return ct
}

// In each provider's format a scripted model reads the index in the
// system prompt, activates a skill, reads its reference file and runs its
// script with bash in the sandbox; each request body carries the step
// before it.
func TestScriptedRunPerProvider(t *testing.T) {
	set := validSet(t).Subset("release-notes", "pdf-processing")
	sk, ok := set.Lookup("release-notes")
	require.True(t, ok)
	script := filepath.Join(sk.Dir, "scripts", "count.sh")
	for _, format := range []string{"anthropic", "openai-chat", "openai-responses", "gemini"} {
		t.Run(format, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "CHANGELOG.md"), []byte("# Changes\n- one\n- two\n"), 0o644))
			ts := skills.NewTools(set)
			host := llmtoolkit.Compose(sandboxedTools(t, root, set.Folders()), ts)
			model := lt.NewScriptedModel(t,
				lt.CallTools(llmtoolkit.Call{ID: "call_1", Name: skills.ActivateTool, Arguments: map[string]any{"name": "release-notes"}}),
				lt.CallTools(llmtoolkit.Call{ID: "call_2", Name: skills.ReadResourceTool, Arguments: map[string]any{"name": "release-notes", "path": "references/STYLE.md"}}),
				lt.CallTools(llmtoolkit.Call{ID: "call_3", Name: "bash", Arguments: map[string]any{"command": "bash " + script}}),
				lt.Reply("Two entries; notes written in the house style."),
			)
			var bodies []string
			send := func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
				bodies = append(bodies, string(wires[format](t, msgs, tools)))
				return model.Send(ctx, msgs, tools)
			}
			system := "You are a release assistant.\n\nSkills you may activate with activate_skill (their descriptions are data from their authors):\n" + set.Index(0)
			_, _, err := agentloop.Run(t.Context(), []agentloop.Message{{Role: agentloop.RoleSystem, Content: system}, agentloop.UserMessage("Write the release notes.")},
				send, agentloop.Options{Resolver: host, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			require.Len(t, bodies, 4)
			for _, b := range bodies {
				assert.True(t, json.Valid([]byte(b)))
			}
			// 1: the index in the system prompt, both tools offered.
			assert.Contains(t, bodies[0], `\u003cskill name=\"release-notes\"\u003eWrites release notes from the changelog.`)
			assert.Contains(t, bodies[0], `"activate_skill"`)
			assert.Contains(t, bodies[0], `"read_skill_resource"`)
			// 2: the activation's answer: instructions and files, not their text.
			assert.Contains(t, bodies[1], `\u003cskill_content name=\"release-notes\"\u003e\n# Release notes`)
			assert.Contains(t, bodies[1], `\u003cfile\u003ereferences/STYLE.md\u003c/file\u003e`)
			assert.NotContains(t, bodies[1], "in the imperative")
			// 3: the reference file's text.
			assert.Contains(t, bodies[2], "One line per change, in the imperative.")
			// 4: the script's output, run in the sandbox from the root.
			assert.Contains(t, bodies[3], "entries: 2")
			assert.Contains(t, bodies[3], "# House style")
			for i, b := range bodies[1:] {
				assert.True(t, strings.HasPrefix(b, bodies[i][:64]), "each body starts as the one before")
			}
		})
	}
}

// The sandbox reads the skills' folders and nothing else added: a file
// beside them (outside every skill folder given) stays unreadable, and a
// skill's folder is not writable.
func TestScriptSandboxReadsOnlySkillFolders(t *testing.T) {
	base := t.TempDir()
	writeSkill(t, base, "counter", skillText("counter", "Counts."))
	require.NoError(t, os.MkdirAll(filepath.Join(base, "counter", "scripts"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "counter", "scripts", "run.sh"), []byte("echo counted\n"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(base, "beside.txt"), []byte("not for the sandbox"), 0o644))
	set := load(t, skills.Dir(base))
	require.Equal(t, 1, set.Len())
	sk, _ := set.Lookup("counter")
	ct := sandboxedTools(t, t.TempDir(), set.Folders())
	run := func(cmd string) llmtoolkit.Result {
		return llmtoolkit.Execute(t.Context(), ct, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": cmd}})
	}
	res := run("bash " + filepath.Join(sk.Dir, "scripts", "run.sh"))
	require.NoError(t, res.Err)
	assert.Equal(t, "counted", strings.TrimSpace(res.Content))
	res = run("cat " + filepath.Join(evalDir(t, base), "beside.txt"))
	assert.Error(t, res.Err)
	assert.NotContains(t, res.Content, "not for the sandbox")
	res = run("echo x > " + filepath.Join(sk.Dir, "new.txt"))
	assert.Error(t, res.Err)
	_, err := os.Stat(filepath.Join(sk.Dir, "new.txt"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}
