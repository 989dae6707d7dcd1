//go:build peers

package conformance_test

import (
	"encoding/json"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestAnthropicNativeTextEditorInSDK: a tool declared Native
// "anthropic/text_editor_20250728" (codetools' str_replace_based_edit_tool)
// is written as the SDK's ToolTextEditor20250728Param, and the memory tool
// ("anthropic/memory_20250818") as its MemoryTool20250818Param and bash in
// its persistent form ("anthropic/bash_20250124") as its
// ToolBash20250124Param, nothing lost, beside an ordinary client tool.
func TestAnthropicNativeTextEditorInSDK(t *testing.T) {
	editor := llmtoolkit.MustTool("str_replace_based_edit_tool", "View and edit files.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	editor.Native = "anthropic/text_editor_20250728"
	read := llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	memory := llmtoolkit.MustTool("memory", "Notes.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	memory.Native = "anthropic/memory_20250818"
	bash := llmtoolkit.MustTool("bash", "Runs commands.", map[string]any{"type": "object", "properties": map[string]any{"command": map[string]any{"type": "string"}}})
	bash.Native = "anthropic/bash_20250124"
	body := mustJSON(t, provider.AnthropicTools([]llmtoolkit.Tool{editor, read, memory, bash}))
	tools := sdkRoundTrip[[]anthropic.ToolUnionParam](t, "Anthropic tools", body)
	require.Len(t, tools, 4)
	require.NotNil(t, tools[3].OfBashTool20250124, "%s", body)
	assert.Equal(t, "bash", string(tools[3].OfBashTool20250124.Name))
	require.NotNil(t, tools[2].OfMemoryTool20250818, "%s", body)
	require.NotNil(t, tools[0].OfTextEditor20250728, "%s", body)
	assert.Nil(t, tools[0].OfTool)
	require.NotNil(t, tools[1].OfTool)
	assert.Equal(t, "read_file", tools[1].OfTool.Name)
}

// TestOpenAIResponsesNativeToolsInSDK: tools declared openai/apply_patch
// and openai/shell decode as the SDK's ApplyPatchToolParam and
// FunctionShellToolParam, nothing lost; the golden response's items decode
// as the SDK's ResponseApplyPatchToolCall and ResponseFunctionShellToolCall,
// and our reader reads the call ids, paths and commands the SDK reads; the
// answers decode as the SDK's apply_patch_call_output and shell_call_output
// input items with their status, output and outcomes.
func TestOpenAIResponsesNativeToolsInSDK(t *testing.T) {
	patch := llmtoolkit.MustTool("apply_patch", "Apply a V4A patch.", map[string]any{"type": "object", "properties": map[string]any{"patch": map[string]any{"type": "string"}}})
	patch.Native = "openai/apply_patch"
	shell := llmtoolkit.MustTool("shell", "Run commands.", map[string]any{"type": "object", "properties": map[string]any{"commands": map[string]any{"type": "array"}}})
	shell.Native = "openai/shell"
	read := llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	tools := sdkRoundTrip[[]responses.ToolUnionParam](t, "Responses tools", mustJSON(t, provider.OpenAIResponsesTools([]llmtoolkit.Tool{patch, shell, read})))
	require.Len(t, tools, 3)
	assert.NotNil(t, tools[0].OfApplyPatch)
	assert.NotNil(t, tools[1].OfShell)
	require.NotNil(t, tools[2].OfFunction)

	fixture := providerTestdata(t, "openai_responses_native_calls.json")
	var sdk responses.Response
	require.NoError(t, json.Unmarshal(fixture, &sdk))
	resp, err := provider.OpenAIResponsesResponse(fixture)
	require.NoError(t, err)
	require.Len(t, sdk.Output, 4)
	require.Len(t, resp.ToolCalls, 4)
	for i, item := range sdk.Output[:3] {
		call := item.AsApplyPatchCall()
		assert.Equal(t, call.CallID, resp.ToolCalls[i].ID)
		p, _ := resp.ToolCalls[i].Arguments["patch"].(string)
		assert.Contains(t, p, ": "+call.Operation.Path+"\n", "the patch names the operation's path")
		assert.Contains(t, p, call.Operation.Diff, "the patch holds the operation's diff")
	}
	sh := sdk.Output[3].AsShellCall()
	assert.Equal(t, sh.CallID, resp.ToolCalls[3].ID)
	assert.Equal(t, "local", sh.Environment.Type)
	var commands []string
	for _, c := range resp.ToolCalls[3].Arguments["commands"].([]any) {
		commands = append(commands, c.(string))
	}
	assert.Equal(t, sh.Action.Commands, commands)
	assert.Equal(t, float64(sh.Action.TimeoutMs), resp.ToolCalls[3].Arguments["timeout_ms"])
	assert.Equal(t, float64(sh.Action.MaxOutputLength), resp.ToolCalls[3].Arguments["max_output_length"])

	c := resp.ToolCalls
	history := []agentloop.Message{agentloop.UserMessage("go"), resp.Message(),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: c[0].ID, Name: c[0].Name, Content: "A docs/notes.md"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: c[1].ID, Name: c[1].Name, Content: "context not found", IsError: true}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: c[2].ID, Name: c[2].Name, Content: "D old.txt"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: c[3].ID, Name: c[3].Name,
			Content: `{"output":[{"stdout":"built","stderr":"warn","outcome":{"type":"exit","exit_code":2}},{"stdout":"","stderr":"","outcome":{"type":"timeout"}}]}`}),
	}
	input, err := provider.OpenAIResponsesInput(history)
	require.NoError(t, err)
	back := sdkRoundTrip[[]responses.ResponseInputItemUnionParam](t, "Responses input", mustJSON(t, input))
	require.Len(t, back, 9)
	for i := 1; i <= 3; i++ {
		require.NotNil(t, back[i].OfApplyPatchCall, "item %d", i)
		assert.Equal(t, c[i-1].ID, back[i].OfApplyPatchCall.CallID)
	}
	require.NotNil(t, back[4].OfShellCall)
	assert.Equal(t, sh.Action.Commands, back[4].OfShellCall.Action.Commands)
	require.NotNil(t, back[5].OfApplyPatchCallOutput)
	assert.Equal(t, "completed", back[5].OfApplyPatchCallOutput.Status)
	assert.Equal(t, "A docs/notes.md", back[5].OfApplyPatchCallOutput.Output.Value)
	require.NotNil(t, back[6].OfApplyPatchCallOutput)
	assert.Equal(t, "failed", back[6].OfApplyPatchCallOutput.Status)
	require.NotNil(t, back[8].OfShellCallOutput)
	out := back[8].OfShellCallOutput
	assert.Equal(t, c[3].ID, out.CallID)
	assert.Equal(t, int64(4096), out.MaxOutputLength.Value)
	require.Len(t, out.Output, 2)
	assert.Equal(t, "built", out.Output[0].Stdout)
	assert.Equal(t, "warn", out.Output[0].Stderr)
	require.NotNil(t, out.Output[0].Outcome.OfExit)
	assert.Equal(t, int64(2), out.Output[0].Outcome.OfExit.ExitCode)
	assert.NotNil(t, out.Output[1].Outcome.OfTimeout)
}
