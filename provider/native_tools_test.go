package provider_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func textEditorTool(t *testing.T) llmtoolkit.Tool {
	t.Helper()
	tool := llmtoolkit.MustTool("str_replace_based_edit_tool", "View and edit files.", map[string]any{
		"type": "object", "required": []any{"command", "path"},
		"properties": map[string]any{"command": map[string]any{"type": "string"}, "path": map[string]any{"type": "string"}},
	})
	tool.Native = "anthropic/text_editor_20250728"
	return tool
}

// TestAnthropicNativeTextEditor: a tool that takes Anthropic's text editor
// input is declared as the built-in type, other tools as client tools;
// to OpenAI it is an ordinary function; the model's call comes back under
// the same name and its answer goes as a tool_result.
func TestAnthropicNativeTextEditor(t *testing.T) {
	read := llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	tools := []llmtoolkit.Tool{textEditorTool(t), read}
	body, err := json.Marshal(provider.AnthropicTools(tools))
	require.NoError(t, err)
	assert.JSONEq(t, `[{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"},
		{"name":"read_file","description":"Reads a file.","input_schema":{"type":"object","properties":{"path":{"type":"string"}}}}]`, string(body))

	openai, err := json.Marshal(provider.OpenAIResponsesTools(tools[:1]))
	require.NoError(t, err)
	assert.Contains(t, string(openai), `"type":"function"`)
	assert.Contains(t, string(openai), `"name":"str_replace_based_edit_tool"`)

	resp, err := provider.AnthropicResponse(json.RawMessage(`{"content":[{"type":"tool_use","id":"toolu_1","name":"str_replace_based_edit_tool",
		"input":{"command":"str_replace","path":"a.py","old_str":"x = 1","new_str":"x = 2"}}],"stop_reason":"tool_use"}`))
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 1)
	call := resp.ToolCalls[0]
	assert.Equal(t, "str_replace_based_edit_tool", call.Name)
	assert.Equal(t, "str_replace", call.Arguments["command"])

	history := []agentloop.Message{
		agentloop.UserMessage("fix a.py"),
		{Role: agentloop.RoleAssistant, ToolCalls: resp.ToolCalls, Provider: resp.Provider},
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: call.ID, Name: call.Name,
			Content: "Error: Found 2 matches for replacement text. Please provide more context to make a unique match.", IsError: true}),
	}
	_, msgs, err := provider.AnthropicMessages(history)
	require.NoError(t, err)
	next, err := json.Marshal(msgs[len(msgs)-1])
	require.NoError(t, err)
	assert.JSONEq(t, `{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,
		"content":"Error: Found 2 matches for replacement text. Please provide more context to make a unique match."}]}`, string(next))
}
