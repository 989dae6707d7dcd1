package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestAnthropicScriptedRunWithTrainedTools: an httptest server replays a
// Claude model's turns through agentloop over codetools' Claude set; the
// model views a file with the native text editor, edits it, patches it and
// runs commands in the native bash's persistent session (a variable set
// by one is read by the next), and each next request carries the answer
// as a tool_result block for the call's id, the text editor and bash
// declared natively.
func TestAnthropicScriptedRunWithTrainedTools(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	ct, err := codetools.New(dir, codetools.WithModelTools("claude-sonnet-4-5", ""), codetools.WithApplyPatch())
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })

	turns := []string{
		`{"content":[{"type":"tool_use","id":"toolu_1","name":"str_replace_based_edit_tool","input":{"command":"view","path":"a.txt"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"tool_use","id":"toolu_2","name":"str_replace_based_edit_tool","input":{"command":"str_replace","path":"a.txt","old_str":"one","new_str":"ONE"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"tool_use","id":"toolu_3","name":"apply_patch","input":{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** End Patch"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"tool_use","id":"toolu_4","name":"bash","input":{"command":"export NOTE=kept; cat a.txt"}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"tool_use","id":"toolu_5","name":"bash","input":{"command":"echo \"note: $NOTE\""}}],"stop_reason":"tool_use"}`,
		`{"content":[{"type":"text","text":"done"}],"stop_reason":"end_turn"}`,
	}
	var mu sync.Mutex
	var bodies []map[string]any
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := len(bodies)
		bodies = append(bodies, body)
		mu.Unlock()
		if n >= len(turns) {
			http.Error(w, "no more turns", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, turns[n])
	}))
	t.Cleanup(api.Close)

	send := func(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		system, msgs, err := provider.AnthropicMessages(history)
		if err != nil {
			return agentloop.Response{}, err
		}
		body, err := provider.MarshalRequest(map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 1024,
			"system": system, "messages": msgs, "tools": provider.AnthropicTools(tools)})
		if err != nil {
			return agentloop.Response{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL, bytes.NewReader(body))
		if err != nil {
			return agentloop.Response{}, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return agentloop.Response{}, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return agentloop.Response{}, err
		}
		return provider.AnthropicResponse(out)
	}
	final, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("fix a.txt")}, send, agentloop.Options{Resolver: ct})
	require.NoError(t, err)
	assert.Equal(t, "done", final.Content)
	require.Len(t, bodies, len(turns))

	// The first request declares the text editor and bash natively,
	// apply_patch as a client tool with a schema.
	decl := map[string]map[string]any{}
	for _, tool := range bodies[0]["tools"].([]any) {
		m := tool.(map[string]any)
		decl[m["name"].(string)] = m
	}
	assert.Equal(t, map[string]any{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}, decl[codetools.TextEditorName])
	assert.NotNil(t, decl["apply_patch"]["input_schema"])
	assert.Equal(t, map[string]any{"type": "bash_20250124", "name": "bash"}, decl["bash"])

	// Each next request ends with the answer to the previous call.
	for i, want := range []string{"two", "Successfully", "a.txt", `ONE\nTWO`, "note: kept"} {
		msgs := bodies[i+1]["messages"].([]any)
		last := msgs[len(msgs)-1].(map[string]any)
		require.Equal(t, "user", last["role"])
		block := last["content"].([]any)[0].(map[string]any)
		assert.Equal(t, "tool_result", block["type"], "request %d", i+1)
		assert.Equal(t, "toolu_"+string(rune('1'+i)), block["tool_use_id"], "request %d", i+1)
		text, _ := json.Marshal(block["content"])
		assert.Contains(t, string(text), want, "request %d: %s", i+1, text)
		assert.NotEqual(t, true, block["is_error"], "request %d: %s", i+1, text)
	}
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "ONE\nTWO\n", string(got))
}

// TestResponsesScriptedRunWithTrainedTools: an httptest server replays a
// GPT-5 model's turns through agentloop over codetools' GPT-5 set; the
// model creates a file and updates another with the native apply_patch
// (apply_patch_call items), then runs commands with the native shell (a
// shell_call), and each next request replays the call items and carries
// the answers as apply_patch_call_output and shell_call_output items for
// the calls' ids; apply_patch and shell are declared as the API's own.
func TestResponsesScriptedRunWithTrainedTools(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	ct, err := codetools.New(dir, codetools.WithModelTools("gpt-5.1-codex", ""))
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })

	turns := []string{
		`{"status":"completed","output":[
			{"type":"apply_patch_call","id":"apc_1","call_id":"call_1","status":"completed","operation":{"type":"create_file","path":"b.txt","diff":"+new file\n"}},
			{"type":"apply_patch_call","id":"apc_2","call_id":"call_2","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-two\n+TWO\n"}}]}`,
		`{"status":"completed","output":[
			{"type":"apply_patch_call","id":"apc_3","call_id":"call_3","status":"completed","operation":{"type":"update_file","path":"a.txt","diff":"@@\n-missing\n+x\n"}}]}`,
		`{"status":"completed","output":[
			{"type":"shell_call","id":"sh_1","call_id":"call_4","status":"completed","action":{"commands":["cat a.txt b.txt","ls nope"],"timeout_ms":10000,"max_output_length":1000},"environment":{"type":"local"}}]}`,
		`{"status":"completed","output":[{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}]}`,
	}
	var mu sync.Mutex
	var bodies []map[string]any
	var raw [][]byte
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body map[string]any
		if err := json.Unmarshal(b, &body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := len(bodies)
		bodies, raw = append(bodies, body), append(raw, b)
		mu.Unlock()
		if n >= len(turns) {
			http.Error(w, "no more turns", http.StatusBadRequest)
			return
		}
		_, _ = io.WriteString(w, turns[n])
	}))
	t.Cleanup(api.Close)

	send := func(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		input, err := provider.OpenAIResponsesInput(history)
		if err != nil {
			return agentloop.Response{}, err
		}
		body, err := provider.MarshalRequest(map[string]any{"model": "gpt-5.1-codex", "input": input, "store": false,
			"tools": provider.OpenAIResponsesTools(tools)})
		if err != nil {
			return agentloop.Response{}, err
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, api.URL, bytes.NewReader(body))
		if err != nil {
			return agentloop.Response{}, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return agentloop.Response{}, err
		}
		defer resp.Body.Close()
		out, err := io.ReadAll(resp.Body)
		if err != nil {
			return agentloop.Response{}, err
		}
		return provider.OpenAIResponsesResponse(out)
	}
	final, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("fix a.txt")}, send, agentloop.Options{Resolver: ct})
	require.NoError(t, err)
	assert.Equal(t, "done", final.Content)
	require.Len(t, bodies, len(turns))
	for _, b := range raw {
		checkOpenAIResponsesSDK(t, b)
	}

	// The first request declares apply_patch and shell as the API's own,
	// bash and the others as function tools.
	var types []string
	for _, tool := range bodies[0]["tools"].([]any) {
		m := tool.(map[string]any)
		if m["type"] != "function" {
			assert.Len(t, m, 1, "%v", m)
			types = append(types, m["type"].(string))
		}
	}
	assert.Equal(t, []string{"apply_patch", "shell"}, types)

	// Each next request replays the calls and ends with their answers.
	outputs := func(i int) []map[string]any {
		var out []map[string]any
		for _, it := range bodies[i]["input"].([]any) {
			m := it.(map[string]any)
			if m["type"] == "apply_patch_call_output" || m["type"] == "shell_call_output" {
				out = append(out, m)
			}
			assert.NotEqual(t, "function_call_output", m["type"])
		}
		return out
	}
	o := outputs(1)
	require.Len(t, o, 2)
	assert.Equal(t, map[string]any{"type": "apply_patch_call_output", "call_id": "call_1", "status": "completed", "output": o[0]["output"]}, o[0])
	assert.Contains(t, o[0]["output"], "b.txt")
	assert.Equal(t, "call_2", o[1]["call_id"])
	assert.Equal(t, "completed", o[1]["status"])
	assert.Contains(t, o[1]["output"], "M a.txt")

	o = outputs(2)[2:]
	require.Len(t, o, 1)
	assert.Equal(t, "call_3", o[0]["call_id"])
	assert.Equal(t, "failed", o[0]["status"], "a hunk that does not apply")
	assert.Contains(t, o[0]["output"], "no file changed")

	o = outputs(3)[3:]
	require.Len(t, o, 1)
	assert.Equal(t, "shell_call_output", o[0]["type"])
	assert.Equal(t, "call_4", o[0]["call_id"])
	assert.Equal(t, float64(1000), o[0]["max_output_length"])
	per := o[0]["output"].([]any)
	require.Len(t, per, 2)
	first, second := per[0].(map[string]any), per[1].(map[string]any)
	assert.Equal(t, "one\nTWO\nnew file", first["stdout"])
	assert.Equal(t, map[string]any{"type": "exit", "exit_code": float64(0)}, first["outcome"])
	assert.Contains(t, second["stderr"], "nope")
	assert.Equal(t, "", second["stdout"])
	assert.NotEqual(t, float64(0), second["outcome"].(map[string]any)["exit_code"])

	// The calls were replayed as the items they came as.
	var replayed []string
	for _, it := range bodies[3]["input"].([]any) {
		if m := it.(map[string]any); m["type"] == "apply_patch_call" || m["type"] == "shell_call" {
			replayed = append(replayed, m["call_id"].(string))
		}
	}
	assert.Equal(t, []string{"call_1", "call_2", "call_3", "call_4"}, replayed)

	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "one\nTWO\n", string(got))
	got, err = os.ReadFile(filepath.Join(dir, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new file\n", string(got))
}
