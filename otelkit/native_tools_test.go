package otelkit_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestNativeToolSpans: the calls of the trained tools, read from the
// providers' own shapes (a Responses apply_patch_call and shell_call, an
// Anthropic bash_20250124 and memory tool_use), each leave one tool span
// under the tool's one name, with its call id, the arguments and answer
// as Execute saw them (the patch as V4A, the shell's JSON) and the error
// status of a patch that failed.
func TestNativeToolSpans(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\n"), 0o644))
	gpt, err := codetools.New(dir, codetools.WithModelTools("gpt-5.1", ""))
	require.NoError(t, err)
	t.Cleanup(func() { gpt.Close() })
	claude, err := codetools.New(dir, codetools.WithModelTools("claude-sonnet-4-5", "notes"))
	require.NoError(t, err)
	t.Cleanup(func() { claude.Close() })
	tel := newTelemetry(t)
	ctx := testContext(t)

	resp, err := provider.OpenAIResponsesResponse(json.RawMessage(`{"status":"completed","output":[
		{"type":"apply_patch_call","id":"apc_1","call_id":"call_patch","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-one\n+ONE\n"}},
		{"type":"apply_patch_call","id":"apc_2","call_id":"call_bad","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-missing\n+x\n"}},
		{"type":"shell_call","id":"sh_1","call_id":"call_shell","status":"completed","action":{"commands":["cat a.txt"],"timeout_ms":null,"max_output_length":null}}]}`))
	require.NoError(t, err)
	r := otelkit.Instrument(gpt, tel.opts(otelkit.WithCaptureContent())...)
	for _, c := range resp.ToolCalls {
		llmtoolkit.Execute(ctx, r, c)
	}
	msg, err := provider.AnthropicResponse(json.RawMessage(`{"content":[
		{"type":"tool_use","id":"toolu_bash","name":"bash","input":{"command":"echo hi"}},
		{"type":"tool_use","id":"toolu_mem","name":"memory","input":{"command":"create","path":"/memories/n.md","file_text":"x\n"}}],"stop_reason":"tool_use"}`))
	require.NoError(t, err)
	r = otelkit.Instrument(claude, tel.opts(otelkit.WithCaptureContent())...)
	for _, c := range msg.ToolCalls {
		llmtoolkit.Execute(ctx, r, c)
	}

	byID := map[string]map[string]any{}
	status := map[string]codes.Code{}
	for _, s := range tel.spans() {
		a := attrs(s)
		id, _ := a["gen_ai.tool.call.id"].(string)
		byID[id] = a
		status[id] = s.Status.Code
		assert.Equal(t, "execute_tool "+a["gen_ai.tool.name"].(string), s.Name)
	}
	require.Len(t, byID, 5, "one span per call")
	for id, name := range map[string]string{"call_patch": "apply_patch", "call_bad": "apply_patch", "call_shell": "shell", "toolu_bash": "bash", "toolu_mem": "memory"} {
		assert.Equal(t, name, byID[id]["gen_ai.tool.name"], id)
	}
	assert.Contains(t, byID["call_patch"]["gen_ai.tool.call.arguments"], `*** Update File: a.txt`)
	assert.Contains(t, byID["call_shell"]["gen_ai.tool.call.result"], `"stdout":"ONE"`)
	assert.Contains(t, byID["toolu_bash"]["gen_ai.tool.call.result"], "hi")
	assert.Equal(t, codes.Error, status["call_bad"])
	assert.Equal(t, codes.Unset, status["call_patch"])
	assert.FileExists(t, filepath.Join(dir, "notes", "n.md"))
}
