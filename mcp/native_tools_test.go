package mcp

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestNativeToolsServedAsOrdinaryTools: the tools a provider declares
// natively (Anthropic's text editor, memory and persistent bash; the
// Responses API's apply_patch and shell) are served over MCP as ordinary
// tools, with their input schemas, and their calls carry the same Display
// as the local call's (diff, patch, memory, process, shell); the bash
// session keeps its state from one MCP call to the next.
func TestNativeToolsServedAsOrdinaryTools(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	ct, err := codetools.New(dir, codetools.WithModelTools("claude-sonnet-4-5", "notes"), codetools.WithApplyPatch(), codetools.WithShell())
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	cs := sdkClient(t, ct)
	ctx := testContext(t)

	list, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	schemas := map[string]map[string]any{}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool.InputSchema)
		require.NoError(t, err)
		var s map[string]any
		require.NoError(t, json.Unmarshal(b, &s))
		schemas[tool.Name] = s
	}
	for name, required := range map[string][]any{
		codetools.TextEditorName: {"command", "path"},
		"memory":                 {"command"},
		"apply_patch":            {"patch"},
		codetools.ShellName:      {"commands"},
	} {
		s, ok := schemas[name]
		require.True(t, ok, "%s is served", name)
		assert.Equal(t, "object", s["type"], name)
		assert.Subset(t, s["required"], required, name)
		assert.NotEmpty(t, s["properties"], name)
	}

	for _, tc := range []struct {
		call sdk.CallToolParams
		kind string // the Display's kind; empty: none
	}{
		{sdk.CallToolParams{Name: codetools.TextEditorName, Arguments: map[string]any{"command": "str_replace", "path": "a.txt", "old_str": "one", "new_str": "ONE"}}, codetools.DisplayDiff},
		{sdk.CallToolParams{Name: "apply_patch", Arguments: map[string]any{"patch": "*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"}}, codetools.DisplayPatch},
		{sdk.CallToolParams{Name: "memory", Arguments: map[string]any{"command": "create", "path": "/memories/n.md", "file_text": "note\n"}}, codetools.DisplayMemory},
		{sdk.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "export KEPT=yes"}}, codetools.DisplayProcess},
		{sdk.CallToolParams{Name: "bash", Arguments: map[string]any{"command": "echo kept=$KEPT"}}, codetools.DisplayProcess},
		{sdk.CallToolParams{Name: codetools.ShellName, Arguments: map[string]any{"commands": []any{"cat a.txt"}}}, codetools.DisplayShell},
	} {
		res, err := cs.CallTool(ctx, &tc.call)
		require.NoError(t, err)
		text := res.Content[0].(*sdk.TextContent).Text
		require.False(t, res.IsError, "%s: %v", tc.call.Name, text)
		if args, _ := tc.call.Arguments.(map[string]any); args["command"] == "echo kept=$KEPT" {
			assert.Equal(t, "kept=yes", text, "the bash session carries state across MCP calls")
		}
		d, ok := res.Meta[DisplayMetaKey].(map[string]any)
		if tc.kind == "" {
			assert.False(t, ok, "%s: no Display", tc.call.Name)
			continue
		}
		require.True(t, ok, "%s has a Display", tc.call.Name)
		assert.Equal(t, tc.kind, d["kind"], tc.call.Name)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "ONE\nTWO\n", string(got))
	assert.FileExists(t, filepath.Join(dir, "notes", "n.md"))
}
