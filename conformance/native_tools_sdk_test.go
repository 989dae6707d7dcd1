package conformance_test

import (
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestAnthropicNativeTextEditorInSDK: a tool declared Native
// "anthropic/text_editor_20250728" (codetools' str_replace_based_edit_tool)
// is written as the SDK's ToolTextEditor20250728Param, and the memory tool
// ("anthropic/memory_20250818") as its MemoryTool20250818Param, nothing
// lost, beside an ordinary client tool.
func TestAnthropicNativeTextEditorInSDK(t *testing.T) {
	editor := llmtoolkit.MustTool("str_replace_based_edit_tool", "View and edit files.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	editor.Native = "anthropic/text_editor_20250728"
	read := llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	memory := llmtoolkit.MustTool("memory", "Notes.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	memory.Native = "anthropic/memory_20250818"
	body := mustJSON(t, provider.AnthropicTools([]llmtoolkit.Tool{editor, read, memory}))
	tools := sdkRoundTrip[[]anthropic.ToolUnionParam](t, "Anthropic tools", body)
	require.Len(t, tools, 3)
	require.NotNil(t, tools[2].OfMemoryTool20250818, "%s", body)
	require.NotNil(t, tools[0].OfTextEditor20250728, "%s", body)
	assert.Nil(t, tools[0].OfTool)
	require.NotNil(t, tools[1].OfTool)
	assert.Equal(t, "read_file", tools[1].OfTool.Name)
}
