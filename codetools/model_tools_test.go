package codetools_test

import (
	"context"
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
		native        map[string]string
	}{
		{model: "claude-sonnet-4-5", extra: []string{codetools.TextEditorName},
			native: map[string]string{codetools.TextEditorName: "text_editor_20250728"}},
		{model: "claude-opus-4-1", memory: "notes", extra: []string{codetools.TextEditorName, "memory"},
			native: map[string]string{codetools.TextEditorName: "text_editor_20250728", "memory": "memory_20250818"}},
		{model: "gpt-5", memory: "notes", extra: []string{"apply_patch"}},
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
