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

// nativeOpenAITools are apply_patch and shell as codetools' WithModelTools
// makes them for GPT-5, and a function tool.
func nativeOpenAITools() []llmtoolkit.Tool {
	patch := llmtoolkit.MustTool("apply_patch", "Apply a V4A patch.", map[string]any{"type": "object", "properties": map[string]any{"patch": map[string]any{"type": "string"}}})
	patch.Native = "openai/apply_patch"
	shell := llmtoolkit.MustTool("shell", "Run commands.", map[string]any{"type": "object", "properties": map[string]any{"commands": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}})
	shell.Native = "openai/shell"
	return []llmtoolkit.Tool{patch, shell, weatherTool()}
}

// nativeAnswers are the results of the four calls of
// openai_responses_native_calls.json.
func nativeAnswers(calls []llmtoolkit.Call) []agentloop.Message {
	return []agentloop.Message{
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[0].ID, Name: calls[0].Name, Content: "A docs/notes.md"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[1].ID, Name: calls[1].Name, Content: "the patch was not applied, no file changed: hunk 1 of main.go: context not found", IsError: true}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[2].ID, Name: calls[2].Name, Content: "D old.txt"}),
		agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: calls[3].ID, Name: calls[3].Name,
			Content: `{"output":[{"stdout":"","stderr":"","outcome":{"type":"exit","exit_code":0}},{"stdout":"ok  \tm\t0.01s","stderr":"","outcome":{"type":"timeout"}}],"max_output_length":4096}`}),
	}
}

// TestOpenAIResponsesNativeApplyPatchAndShell: tools declared
// openai/apply_patch and openai/shell are written as the API's own
// {"type": ...}; the response's apply_patch_call and shell_call items are
// read as calls of those tools (each operation as a V4A patch of its one
// file, the action as arguments); the next request replays the calls as
// they came and answers them with apply_patch_call_output (completed or
// failed) and shell_call_output (per command) items, not function outputs.
func TestOpenAIResponsesNativeApplyPatchAndShell(t *testing.T) {
	tools := nativeOpenAITools()
	assert.JSONEq(t, `[{"type":"apply_patch"},{"type":"shell"},
		{"type":"function","name":"get_current_weather","description":"Get the current weather in a given location","strict":false,
		 "parameters":{"type":"object","properties":{"location":{"type":"string","description":"The city and state, e.g. San Francisco, CA"},"unit":{"type":"string","enum":["celsius","fahrenheit"]}},"required":["location"]}}]`,
		string(mustJSON(t, provider.OpenAIResponsesTools(tools))))
	// To the other formats they are function tools.
	assert.Contains(t, string(mustJSON(t, provider.AnthropicTools(tools[:2]))), `"input_schema"`)
	assert.Contains(t, string(mustJSON(t, provider.OpenAITools(tools[:2]))), `"name":"apply_patch"`)
	// Named otherwise, the calls would come back under another name: a
	// function tool.
	renamed := tools[0]
	renamed.Name = "patch"
	assert.Equal(t, "function", provider.OpenAIResponsesTools([]llmtoolkit.Tool{renamed})[0].Type)

	resp, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_native_calls.json"))
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 4)
	c := resp.ToolCalls
	for i, want := range []struct{ id, name string }{
		{"call_patch_create", "apply_patch"}, {"call_patch_update", "apply_patch"}, {"call_patch_delete", "apply_patch"}, {"call_shell", "shell"},
	} {
		assert.Equal(t, want.id, c[i].ID)
		assert.Equal(t, want.name, c[i].Name)
		assert.Nil(t, c[i].Malformed)
	}
	assert.Equal(t, "*** Begin Patch\n*** Add File: docs/notes.md\n+# Notes\n+first line\n*** End Patch\n", c[0].Arguments["patch"])
	assert.Equal(t, "*** Begin Patch\n*** Update File: main.go\n@@ func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n*** End Patch\n", c[1].Arguments["patch"])
	assert.Equal(t, "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n", c[2].Arguments["patch"])
	assert.Equal(t, map[string]any{"commands": []any{"go build ./...", "go test ./..."}, "timeout_ms": float64(120000), "max_output_length": float64(4096)}, c[3].Arguments)

	history := append([]agentloop.Message{agentloop.UserMessage("rename the greeting"), resp.Message()}, nativeAnswers(c)...)
	input, err := provider.OpenAIResponsesInput(history)
	require.NoError(t, err)
	body := mustJSON(t, map[string]any{"model": "gpt-5.1", "input": input, "tools": provider.OpenAIResponsesTools(tools), "store": false})
	checkOpenAIResponsesSDK(t, body)
	var sent struct {
		Input []map[string]any `json:"input"`
	}
	require.NoError(t, json.Unmarshal(body, &sent))
	require.Len(t, sent.Input, 9)
	assert.JSONEq(t, `{"type":"apply_patch_call","id":"apc_02","call_id":"call_patch_update","status":"completed",
		"operation":{"type":"update_file","path":"main.go","diff":"@@ func main() {\n-\tprintln(\"hi\")\n+\tprintln(\"hello\")\n }\n"}}`, string(mustJSON(t, sent.Input[2])))
	assert.JSONEq(t, `{"type":"shell_call","id":"sh_01","call_id":"call_shell","status":"completed",
		"action":{"commands":["go build ./...","go test ./..."],"timeout_ms":120000,"max_output_length":4096},"environment":{"type":"local"}}`, string(mustJSON(t, sent.Input[4])))
	assert.JSONEq(t, `{"type":"apply_patch_call_output","call_id":"call_patch_create","status":"completed","output":"A docs/notes.md"}`, string(mustJSON(t, sent.Input[5])))
	assert.JSONEq(t, `{"type":"apply_patch_call_output","call_id":"call_patch_update","status":"failed",
		"output":"Error: the patch was not applied, no file changed: hunk 1 of main.go: context not found"}`, string(mustJSON(t, sent.Input[6])))
	assert.JSONEq(t, `{"type":"shell_call_output","call_id":"call_shell","max_output_length":4096,"output":[
		{"stdout":"","stderr":"","outcome":{"type":"exit","exit_code":0}},
		{"stdout":"ok  \tm\t0.01s","stderr":"","outcome":{"type":"timeout"}}]}`, string(mustJSON(t, sent.Input[8])))
	for _, it := range sent.Input {
		assert.NotEqual(t, "function_call_output", it["type"])
		assert.NotEqual(t, "function_call", it["type"])
	}
}

// TestOpenAIResponsesNativeStream: the streamed response reads as the
// unstreamed one, calls and replay alike.
func TestOpenAIResponsesNativeStream(t *testing.T) {
	want, err := provider.OpenAIResponsesResponse(testdata(t, "openai_responses_native_calls.json"))
	require.NoError(t, err)
	got := stream(t, "openai_responses_native_stream.sse", &provider.OpenAIResponsesStream{})
	assertSameAnswer(t, want, got, func(m agentloop.Message) any {
		items, err := provider.OpenAIResponsesAssistantItems(m)
		require.NoError(t, err)
		return items
	})

	// A stream cut before output_item.done: the native calls come from
	// the items as added.
	var s provider.OpenAIResponsesStream
	for _, e := range []string{
		`{"type":"response.output_item.added","output_index":0,"item":{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"in_progress","operation":{"type":"delete_file","path":"old.txt"}}}`,
		`{"type":"response.output_item.added","output_index":1,"item":{"type":"shell_call","id":"sh_1","call_id":"call_2","status":"in_progress","action":{"commands":["ls"],"timeout_ms":null,"max_output_length":null}}}`,
	} {
		require.NoError(t, s.Add([]byte(e)))
	}
	resp, err := s.Response()
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 2)
	assert.Equal(t, "*** Begin Patch\n*** Delete File: old.txt\n*** End Patch\n", resp.ToolCalls[0].Arguments["patch"])
	assert.Equal(t, map[string]any{"commands": []any{"ls"}}, resp.ToolCalls[1].Arguments)
}

// TestOpenAIResponsesShellAnswerNotJSON: a shell call refused or failed
// before it ran (its text is not the shell tool's JSON) is answered by one
// entry whose stderr is the text, exit code 1 for an error.
func TestOpenAIResponsesShellAnswerNotJSON(t *testing.T) {
	resp, err := provider.OpenAIResponsesResponse(json.RawMessage(`{"status":"completed","output":[
		{"type":"shell_call","id":"sh_1","call_id":"call_1","status":"completed","action":{"commands":["rm -rf /"],"timeout_ms":null,"max_output_length":null}}]}`))
	require.NoError(t, err)
	call := resp.ToolCalls[0]
	assert.Equal(t, map[string]any{"commands": []any{"rm -rf /"}}, call.Arguments)
	out := provider.OpenAIResponsesCallOutput(call, llmtoolkit.Result{ToolCallID: "call_1", Name: "shell", Content: `permission denied: tool "shell" was not run`, IsError: true})
	assert.JSONEq(t, `{"type":"shell_call_output","call_id":"call_1","output":[{"stdout":"","stderr":"Error: permission denied: tool \"shell\" was not run","outcome":{"type":"exit","exit_code":1}}]}`,
		string(mustJSON(t, out)))
	// A function call's answer stays a function_call_output.
	fn := provider.OpenAIResponsesCallOutput(llmtoolkit.Call{ID: "call_2", Name: "shell"}, llmtoolkit.Result{ToolCallID: "call_2", Content: "ok"})
	assert.Equal(t, "function_call_output", fn.Type)
}

// TestOpenAIResponsesApplyPatchOperationConfined: an operation's diff or
// path that would make the patch reach another file, or an unknown
// operation, is a malformed call (run as an error answer), never a patch
// of more than its one file.
func TestOpenAIResponsesApplyPatchOperationConfined(t *testing.T) {
	for name, op := range map[string]string{
		"header in an update":     `{"type":"update_file","path":"a.txt","diff":"@@\n-x\n+y\n*** Delete File: b.txt"}`,
		"end in a create":         `{"type":"create_file","path":"a.txt","diff":"+x\n*** End Patch\n*** Begin Patch\n*** Add File: b.txt\n+y"}`,
		"move in an update":       `{"type":"update_file","path":"a.txt","diff":"*** Move to: b.txt\n@@\n-x\n+y"}`,
		"path spanning lines":     `{"type":"delete_file","path":"a.txt\n*** Delete File: b.txt"}`,
		"empty path":              `{"type":"delete_file","path":" "}`,
		"unknown operation":       `{"type":"chmod_file","path":"a.txt"}`,
		"operation not an object": `"*** Begin Patch"`,
	} {
		t.Run(name, func(t *testing.T) {
			body := `{"status":"completed","output":[{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":` + op + `}]}`
			calls, err := provider.OpenAIResponsesToolCalls(json.RawMessage(body))
			require.NoError(t, err)
			require.Len(t, calls, 1)
			require.NotNil(t, calls[0].Malformed, "%v", calls[0].Arguments)
			assert.Equal(t, "apply_patch", calls[0].Name)
			r := llmtoolkit.Execute(t.Context(), nil, calls[0])
			assert.True(t, r.IsError)
			out := provider.OpenAIResponsesCallOutput(calls[0], r)
			assert.Equal(t, "apply_patch_call_output", out.Type)
			assert.Equal(t, "failed", out.Status)
		})
	}
	// "*** End of File" is a diff line.
	calls, err := provider.OpenAIResponsesToolCalls(json.RawMessage(`{"status":"completed","output":[{"type":"apply_patch_call","call_id":"c","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-x\n+y\n*** End of File\n"}}]}`))
	require.NoError(t, err)
	assert.Nil(t, calls[0].Malformed)
}
