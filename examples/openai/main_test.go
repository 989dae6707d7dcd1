package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestRunWithoutKeyExplains(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), nil, env(nil), &out))
	assert.Contains(t, out.String(), "OPENAI_API_KEY is not set")
	assert.Contains(t, out.String(), `"current_time"`)
}

// TestRunAgainstFakeServer drives the whole example against a local server
// that speaks the Chat Completions format: no network.
func TestRunAgainstFakeServer(t *testing.T) {
	var mu sync.Mutex
	var requests []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/chat/completions", r.URL.Path)
		assert.Equal(t, "Bearer test-key", r.Header.Get("Authorization"))
		body, _ := io.ReadAll(r.Body)
		var req map[string]any
		if !assert.NoError(t, json.Unmarshal(body, &req)) {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprint(w, `{"id":"chatcmpl-1","object":"chat.completion","choices":[{"index":0,"finish_reason":"tool_calls","message":{"role":"assistant","content":null,"tool_calls":[
				{"id":"call_1","type":"function","function":{"name":"add","arguments":"{\"numbers\":[17.5,24.25]}"}},
				{"id":"call_2","type":"function","function":{"name":"current_time","arguments":"{\"timezone\":\"Nowhere/Land\"}"}}]}}],
				"usage":{"prompt_tokens":50,"completion_tokens":20,"total_tokens":70}}`)
			return
		}
		fmt.Fprint(w, `{"id":"chatcmpl-2","object":"chat.completion","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"The sum is 41.75."}}],
			"usage":{"prompt_tokens":90,"completion_tokens":8,"total_tokens":98}}`)
	}))
	defer srv.Close()

	var out bytes.Buffer
	err := run(t.Context(), []string{"add", "them"}, env(map[string]string{
		"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "test-model",
	}), &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "-> add")
	assert.Contains(t, out.String(), "<- 41.75 (error=false)")
	assert.Contains(t, out.String(), "(error=true)")
	assert.Contains(t, out.String(), "The sum is 41.75.")

	require.Len(t, requests, 2)
	assert.Equal(t, "test-model", requests[0]["model"])
	assert.Len(t, requests[0]["tools"], 2)
	msgs := requests[1]["messages"].([]any)
	require.Len(t, msgs, 5) // system, user, assistant, tool, tool
	assert.Equal(t, map[string]any{"role": "tool", "tool_call_id": "call_1", "content": "41.75"}, msgs[3])
	assert.Contains(t, msgs[4].(map[string]any)["content"], "Error: unknown time zone")
}

func TestRunReportsHTTPErrors(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":{"message":"Incorrect API key provided"}}`, http.StatusUnauthorized)
	}))
	defer srv.Close()
	err := run(t.Context(), nil, env(map[string]string{"OPENAI_API_KEY": "bad", "OPENAI_BASE_URL": srv.URL}), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "401")
	assert.Contains(t, err.Error(), "Incorrect API key")
}

// TestRunResponsesAPIAgainstFakeServer drives the example with
// OPENAI_API=responses: strict tools, and the reasoning item of the first
// answer sent back unchanged before the call it led to.
func TestRunResponsesAPIAgainstFakeServer(t *testing.T) {
	reasoning := `{"type":"reasoning","id":"rs_1","summary":[],"encrypted_content":"gAAAAABenc"}`
	call := `{"type":"function_call","id":"fc_1","call_id":"call_1","name":"add","arguments":"{\"numbers\":[17.5,24.25]}","status":"completed"}`
	var mu sync.Mutex
	var requests []map[string]json.RawMessage
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		assert.Equal(t, "/v1/responses", r.URL.Path)
		body, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		if !assert.NoError(t, json.Unmarshal(body, &req)) {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		mu.Lock()
		requests = append(requests, req)
		n := len(requests)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			fmt.Fprintf(w, `{"id":"resp_1","object":"response","status":"completed","output":[%s,%s],"usage":{"input_tokens":50,"output_tokens":20}}`, reasoning, call)
			return
		}
		fmt.Fprint(w, `{"id":"resp_2","object":"response","status":"completed","output":[{"type":"message","id":"msg_1","role":"assistant","status":"completed","content":[{"type":"output_text","text":"The sum is 41.75.","annotations":[]}]}],"usage":{"input_tokens":90,"output_tokens":8}}`)
	}))
	defer srv.Close()

	var out bytes.Buffer
	err := run(t.Context(), []string{"add", "them"}, env(map[string]string{
		"OPENAI_API": "responses", "OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": srv.URL + "/v1", "OPENAI_MODEL": "o4-mini",
	}), &out)
	require.NoError(t, err)
	assert.Contains(t, out.String(), "<- 41.75 (error=false)")
	assert.Contains(t, out.String(), "The sum is 41.75.")

	require.Len(t, requests, 2)
	assert.JSONEq(t, `false`, string(requests[0]["store"]))
	assert.JSONEq(t, `["reasoning.encrypted_content"]`, string(requests[0]["include"]))
	var tools []map[string]any
	require.NoError(t, json.Unmarshal(requests[0]["tools"], &tools))
	require.Len(t, tools, 2)
	assert.Equal(t, true, tools[0]["strict"])
	assert.Equal(t, "add", tools[0]["name"])
	var input []json.RawMessage
	require.NoError(t, json.Unmarshal(requests[1]["input"], &input))
	require.Len(t, input, 5) // system, user, reasoning, function_call, function_call_output
	assert.JSONEq(t, reasoning, string(input[2]))
	assert.JSONEq(t, call, string(input[3]))
	assert.JSONEq(t, `{"type":"function_call_output","call_id":"call_1","output":"41.75"}`, string(input[4]))
}

func TestRunRefusesUnknownAPI(t *testing.T) {
	err := run(t.Context(), nil, env(map[string]string{"OPENAI_API": "completions"}), io.Discard)
	require.Error(t, err)
	assert.Contains(t, err.Error(), `"responses"`)
}

func TestRunWithoutKeyExplainsResponses(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), nil, env(map[string]string{"OPENAI_API": "responses"}), &out))
	assert.Contains(t, out.String(), "Responses API format")
	assert.Contains(t, out.String(), `"strict": true`)
}
