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
// runs a command, and each next request carries the answer as a
// tool_result block for the call's id, the text editor declared natively.
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
		`{"content":[{"type":"tool_use","id":"toolu_4","name":"bash","input":{"command":"cat a.txt"}}],"stop_reason":"tool_use"}`,
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

	// The first request declares the text editor natively, bash and
	// apply_patch as client tools with schemas.
	decl := map[string]map[string]any{}
	for _, tool := range bodies[0]["tools"].([]any) {
		m := tool.(map[string]any)
		decl[m["name"].(string)] = m
	}
	assert.Equal(t, map[string]any{"type": "text_editor_20250728", "name": "str_replace_based_edit_tool"}, decl[codetools.TextEditorName])
	assert.NotNil(t, decl["apply_patch"]["input_schema"])
	assert.NotNil(t, decl["bash"]["input_schema"])

	// Each next request ends with the answer to the previous call.
	for i, want := range []string{"two", "Successfully", "a.txt", `ONE\nTWO`} {
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
