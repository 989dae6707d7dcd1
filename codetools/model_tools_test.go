package codetools_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func TestFamilyOf(t *testing.T) {
	for model, want := range map[string]codetools.ModelFamily{
		"claude-sonnet-4-5":                            codetools.FamilyClaude,
		"anthropic/claude-opus-4-1":                    codetools.FamilyClaude,
		"us.anthropic.claude-3-7-sonnet-20250219-v1:0": codetools.FamilyClaude,
		"Claude-Haiku-4-5":                             codetools.FamilyClaude,
		"gpt-5":                                        codetools.FamilyGPT5,
		"gpt-5.1-codex":                                codetools.FamilyGPT5,
		"openai/gpt-5-mini":                            codetools.FamilyGPT5,
		"codex-mini-latest":                            codetools.FamilyGPT5,
		"gpt-4.1":                                      codetools.FamilyOther,
		"gemini-2.5-pro":                               codetools.FamilyOther,
		"":                                             codetools.FamilyOther,
	} {
		assert.Equal(t, want, codetools.FamilyOf(model), model)
	}
}

// TestWithModelTools: each family gets its trained tools on top of the 12
// function tools, Claude's declared to Anthropic natively under the same
// name, and a call under that name runs whatever shape the model saw.
func TestWithModelTools(t *testing.T) {
	base := []string{"read_file", "write_file", "edit_file", "multi_edit", "append_to_file", "list_directory",
		"tree", "file_info", "bash", "grep", "glob", "http_get"}
	for _, tc := range []struct {
		model, memory string
		extra         []string
		native        map[string]string // the Anthropic declarations
		responses     map[string]string // the Responses declarations
	}{
		{model: "claude-sonnet-4-5", extra: []string{codetools.TextEditorName},
			native: map[string]string{codetools.TextEditorName: "text_editor_20250728", "bash": "bash_20250124"}},
		{model: "claude-opus-4-1", memory: "notes", extra: []string{codetools.TextEditorName, "memory"},
			native: map[string]string{codetools.TextEditorName: "text_editor_20250728", "memory": "memory_20250818", "bash": "bash_20250124"}},
		{model: "gpt-5", memory: "notes", extra: []string{"apply_patch", codetools.ShellName},
			responses: map[string]string{"apply_patch": "apply_patch", codetools.ShellName: "shell"}},
		{model: "gemini-2.5-pro", memory: "notes"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\n"), 0o644))
			ct, err := codetools.New(root, codetools.WithModelTools(tc.model, tc.memory))
			require.NoError(t, err)
			defer ct.Close()
			var names []string
			for _, tool := range ct.Tools() {
				names = append(names, tool.Name)
			}
			assert.Equal(t, append(append([]string{}, base...), tc.extra...), names)

			// Anthropic's request: the trained tools as its built-in
			// declarations, the rest as function tools with schemas.
			for _, decl := range provider.AnthropicTools(ct.Tools()) {
				if typ, ok := tc.native[decl.Name]; ok {
					assert.Equal(t, typ, decl.Type, decl.Name)
					assert.Nil(t, decl.InputSchema, decl.Name)
				} else {
					assert.Empty(t, decl.Type, decl.Name)
					assert.NotNil(t, decl.InputSchema, decl.Name)
				}
			}

			// The Responses request: the GPT-5 tools as the API's own
			// declarations, the rest as function tools.
			for i, decl := range provider.OpenAIResponsesTools(ct.Tools()) {
				name := ct.Tools()[i].Name
				if typ, ok := tc.responses[name]; ok {
					assert.Equal(t, typ, decl.Type, name)
					assert.JSONEq(t, `{"type":"`+typ+`"}`, string(mustJSON(t, decl)), name)
				} else {
					assert.Equal(t, "function", decl.Type, name)
				}
			}

			// The trained tool runs on the same engines under its own name.
			ctx := context.Background()
			switch {
			case len(tc.native) > 0:
				res := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: codetools.TextEditorName, Arguments: map[string]any{
					"command": "str_replace", "path": "a.txt", "old_str": "one", "new_str": "two"}})
				require.False(t, res.IsError, res.Content)
			case len(tc.extra) > 0:
				res := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: "apply_patch", Arguments: map[string]any{
					"patch": "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n"}})
				require.False(t, res.IsError, res.Content)
			default:
				res := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{
					"path": "a.txt", "oldText": "one", "newText": "two"}})
				require.False(t, res.IsError, res.Content)
			}
			got, err := os.ReadFile(filepath.Join(root, "a.txt"))
			require.NoError(t, err)
			assert.Equal(t, "two\n", string(got))
		})
	}
}

// TestNativeDeclarationBytes measures what the trained tools cost per turn
// (the tools array goes in every request): the same set written with the
// native declarations and with every tool a function tool. Run with -v
// for the figures.
func TestNativeDeclarationBytes(t *testing.T) {
	ct, err := codetools.New(t.TempDir(), codetools.WithModelTools("claude-sonnet-4-5", "notes"))
	require.NoError(t, err)
	defer ct.Close()
	native := ct.Tools()
	functions := make([]llmtoolkit.Tool, len(native))
	copy(functions, native)
	for i := range functions {
		functions[i].Native = ""
	}
	size := func(v any) int {
		b, err := provider.MarshalRequest(v)
		require.NoError(t, err)
		return len(b)
	}
	nativeBytes, functionBytes := size(provider.AnthropicTools(native)), size(provider.AnthropicTools(functions))
	baseBytes := size(provider.AnthropicTools(native[:12]))
	t.Logf("anthropic tools array: 12 function tools %d B (bash native); + text editor and memory native %d B; all as function tools %d B (%d B a turn saved)",
		baseBytes, nativeBytes, functionBytes, functionBytes-nativeBytes)
	assert.Less(t, nativeBytes, functionBytes)

	gpt, err := codetools.New(t.TempDir(), codetools.WithModelTools("gpt-5", ""))
	require.NoError(t, err)
	defer gpt.Close()
	all := gpt.Tools()
	asFunctions := make([]llmtoolkit.Tool, len(all))
	copy(asFunctions, all)
	for i := range asFunctions {
		asFunctions[i].Native = ""
	}
	nativeBytes, functionBytes = size(provider.OpenAIResponsesTools(all)), size(provider.OpenAIResponsesTools(asFunctions))
	t.Logf("responses tools array: 12 function tools %d B; + apply_patch and shell native %d B, as function tools %d B (%d B a turn saved)",
		size(provider.OpenAIResponsesTools(all[:12])), nativeBytes, functionBytes, functionBytes-nativeBytes)
	assert.Less(t, nativeBytes, functionBytes)
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
