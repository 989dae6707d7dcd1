package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// scriptedCall is one function call a scripted model makes; id "" is a
// call the API sends without an id (Gemini may).
type scriptedCall struct {
	id, name, args string
}

// functionToolsScript is the run both function-tool providers replay: the
// model reads a file, edits it, patches it and adds another with
// apply_patch (a function tool here), sends a patch that does not apply,
// runs two commands in parallel (one fails on stderr), then answers.
var functionToolsScript = [][]scriptedCall{
	{{"call_1", "read_file", `{"path":"a.txt"}`}},
	{{"call_2", "edit_file", `{"path":"a.txt","oldText":"one","newText":"ONE"}`}},
	{{"call_3", "apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-two\n+TWO\n*** Add File: b.txt\n+new file\n*** End Patch"}`}},
	{{"call_4", "apply_patch", `{"patch":"*** Begin Patch\n*** Update File: a.txt\n@@\n-missing\n+x\n*** End Patch"}`}},
	{{"call_5", "bash", `{"command":"cat a.txt b.txt"}`}, {"call_6", "bash", `{"command":"ls nope"}`}},
	nil, // the answer: "done"
}

// scriptedAnswer is what the run's requests must carry back for a call:
// text in the answer, and whether it is a failure.
type scriptedAnswer struct {
	id, name, contains string
	failed             bool
}

var functionToolsAnswers = [][]scriptedAnswer{
	{{"call_1", "read_file", "two", false}},
	{{"call_2", "edit_file", "a.txt", false}},
	{{"call_3", "apply_patch", "b.txt", false}},
	{{"call_4", "apply_patch", "no file changed", true}},
	{{"call_5", "bash", "ONE\nTWO\nnew file", false}, {"call_6", "bash", "nope", true}},
}

// functionToolsRoot is a folder with a.txt and a codetools resolver over it
// with the function tools a model of family "other" gets, and apply_patch.
func functionToolsRoot(t *testing.T, model string) (string, *codetools.CodeTools) {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644))
	ct, err := codetools.New(dir, codetools.WithModelTools(model, ""), codetools.WithApplyPatch())
	require.NoError(t, err)
	t.Cleanup(func() { ct.Close() })
	for _, tool := range ct.Tools() {
		require.Empty(t, tool.Native, "%s: a model of family other gets function tools only", tool.Name)
	}
	return dir, ct
}

// assertFunctionToolsFiles checks the files the run changed.
func assertFunctionToolsFiles(t *testing.T, dir string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(dir, "a.txt"))
	require.NoError(t, err)
	assert.Equal(t, "ONE\nTWO\n", string(got))
	got, err = os.ReadFile(filepath.Join(dir, "b.txt"))
	require.NoError(t, err)
	assert.Equal(t, "new file\n", string(got))
}

// scriptServer serves the scripted turns, recording each request body;
// reply writes turn n of the script to w.
func scriptServer(t *testing.T, check func(r *http.Request) error, reply func(w http.ResponseWriter, r *http.Request, n int)) (*httptest.Server, func() [][]byte) {
	t.Helper()
	var mu sync.Mutex
	var raw [][]byte
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(io.LimitReader(r.Body, 16<<20))
		if err != nil || !json.Valid(b) {
			http.Error(w, "the body is not JSON", http.StatusBadRequest)
			return
		}
		if err := check(r); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		n := len(raw)
		raw = append(raw, b)
		mu.Unlock()
		if n >= len(functionToolsScript) {
			http.Error(w, "no more turns", http.StatusBadRequest)
			return
		}
		reply(w, r, n)
	}))
	t.Cleanup(api.Close)
	return api, func() [][]byte {
		mu.Lock()
		defer mu.Unlock()
		return raw
	}
}

// post sends body and returns the response's body, capped.
func post(ctx context.Context, url string, body []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("status %d: %s", resp.StatusCode, out)
	}
	return out, nil
}

// sseOf writes each event as a server-sent event's data.
func sseOf(events ...[]byte) []byte {
	var b bytes.Buffer
	for _, e := range events {
		b.WriteString("data: ")
		b.Write(e)
		b.WriteString("\n\n")
	}
	return b.Bytes()
}

// halves cuts s in two, so that a streamed argument arrives in pieces.
func halves(s string) (string, string) { return s[:len(s)/2], s[len(s)/2:] }

// chatTurn is turn n of the script as a Chat Completions response, whole
// or as the chunks of a stream.
func chatTurn(t *testing.T, n int, streamed bool) []byte {
	t.Helper()
	calls := functionToolsScript[n]
	id := fmt.Sprintf("chatcmpl-%d", n)
	usage := map[string]any{"prompt_tokens": 100 + n, "completion_tokens": 20, "total_tokens": 120 + n}
	finish := "tool_calls"
	if len(calls) == 0 {
		finish = "stop"
	}
	if !streamed {
		msg := map[string]any{"role": "assistant", "content": nil, "refusal": nil}
		if len(calls) == 0 {
			msg["content"] = "done"
		} else {
			var tcs []map[string]any
			for _, c := range calls {
				tcs = append(tcs, map[string]any{"id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": c.args}})
			}
			msg["tool_calls"] = tcs
		}
		body := map[string]any{"id": id, "object": "chat.completion", "created": 1760000000, "model": "gpt-4.1-2025-04-14",
			"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": finish}}, "usage": usage}
		b := mustJSON(t, body)
		recordForSDK(t, "openai-chat-completion", b)
		return b
	}
	chunk := func(delta map[string]any, finish any, usage any) []byte {
		choices := []any{}
		if delta != nil {
			choices = append(choices, map[string]any{"index": 0, "delta": delta, "logprobs": nil, "finish_reason": finish})
		}
		b := mustJSON(t, map[string]any{"id": id, "object": "chat.completion.chunk", "created": 1760000000,
			"model": "gpt-4.1-2025-04-14", "choices": choices, "usage": usage})
		recordForSDK(t, "openai-chat-chunk", b)
		return b
	}
	events := [][]byte{chunk(map[string]any{"role": "assistant", "content": nil}, nil, nil)}
	if len(calls) == 0 {
		events = append(events, chunk(map[string]any{"content": "do"}, nil, nil), chunk(map[string]any{"content": "ne"}, nil, nil))
	}
	for i, c := range calls {
		first, second := halves(c.args)
		events = append(events,
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "id": c.id, "type": "function", "function": map[string]any{"name": c.name, "arguments": ""}}}}, nil, nil),
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": first}}}}, nil, nil),
			chunk(map[string]any{"tool_calls": []any{map[string]any{"index": i, "function": map[string]any{"arguments": second}}}}, nil, nil))
	}
	events = append(events, chunk(map[string]any{}, finish, nil), chunk(nil, nil, usage), []byte("[DONE]"))
	return sseOf(events...)
}

// chatRequest is what the Chat Completions test reads of a request.
type chatRequest struct {
	Messages []struct {
		Role       string `json:"role"`
		Content    any    `json:"content"`
		ToolCallID string `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Type     string `json:"type"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
}

// TestChatCompletionsScriptedRunWithFunctionTools: an httptest server
// speaking Chat Completions (whole responses and streams) replays a
// model's turns through agentloop over codetools' function tools with
// apply_patch among them; the files change, and each next request carries
// every answer as a "role": "tool" message for its call's id after the
// assistant message replaying the calls, a failure marked "Error: ".
func TestChatCompletionsScriptedRunWithFunctionTools(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[streamed], func(t *testing.T) {
			dir, ct := functionToolsRoot(t, "gpt-4.1")
			api, bodies := scriptServer(t, func(r *http.Request) error {
				if r.URL.Path != "/v1/chat/completions" {
					return fmt.Errorf("path %s", r.URL.Path)
				}
				return nil
			}, func(w http.ResponseWriter, _ *http.Request, n int) {
				if streamed {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = w.Write(chatTurn(t, n, streamed))
			})
			send := func(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
				msgs, err := provider.OpenAIMessages(history)
				if err != nil {
					return agentloop.Response{}, err
				}
				req := map[string]any{"model": "gpt-4.1", "messages": msgs, "tools": provider.OpenAITools(tools)}
				if streamed {
					req["stream"] = true
					req["stream_options"] = map[string]any{"include_usage": true}
				}
				body, err := provider.MarshalRequest(req)
				if err != nil {
					return agentloop.Response{}, err
				}
				out, err := post(ctx, api.URL+"/v1/chat/completions", body)
				if err != nil {
					return agentloop.Response{}, err
				}
				if !streamed {
					return provider.OpenAIResponse(out)
				}
				var s provider.OpenAIStream
				if err := provider.ReadSSE(ctx, bytes.NewReader(out), func(_ string, data []byte) error { return s.Add(data) }); err != nil {
					return agentloop.Response{}, err
				}
				return s.Response()
			}
			final, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.SystemMessage("You edit files."), agentloop.UserMessage("fix a.txt")},
				send, agentloop.Options{Resolver: ct})
			require.NoError(t, err)
			assert.Equal(t, "done", final.Content)
			raw := bodies()
			require.Len(t, raw, len(functionToolsScript))
			var reqs []chatRequest
			for _, b := range raw {
				var r chatRequest
				require.NoError(t, json.Unmarshal(b, &r))
				reqs = append(reqs, r)
				// The SDK's request type has no "stream": its streaming
				// call sets it.
				var m map[string]json.RawMessage
				require.NoError(t, json.Unmarshal(b, &m))
				assert.Equal(t, streamed, string(m["stream"]) == "true")
				delete(m, "stream")
				checkOpenAIChatSDK(t, mustJSON(t, m))
			}

			// Every tool is a function with a schema, apply_patch among them.
			var names []string
			for _, tool := range reqs[0].Tools {
				assert.Equal(t, "function", tool.Type)
				assert.Equal(t, "object", tool.Function.Parameters["type"], tool.Function.Name)
				names = append(names, tool.Function.Name)
			}
			assert.Contains(t, names, "apply_patch")
			assert.Contains(t, names, "bash")

			// Request i+1 ends with the assistant message replaying turn i's
			// calls and one tool message per call, in order.
			for i, answers := range functionToolsAnswers {
				msgs := reqs[i+1].Messages
				require.Greater(t, len(msgs), len(answers), "request %d", i+1)
				asst := msgs[len(msgs)-len(answers)-1]
				require.Equal(t, "assistant", asst.Role, "request %d", i+1)
				require.Len(t, asst.ToolCalls, len(answers), "request %d", i+1)
				for j, want := range answers {
					tc := asst.ToolCalls[j]
					assert.Equal(t, want.id, tc.ID)
					assert.Equal(t, "function", tc.Type)
					assert.Equal(t, want.name, tc.Function.Name)
					assert.JSONEq(t, functionToolsScript[i][j].args, tc.Function.Arguments)
					m := msgs[len(msgs)-len(answers)+j]
					assert.Equal(t, "tool", m.Role, "request %d", i+1)
					assert.Equal(t, want.id, m.ToolCallID, "request %d", i+1)
					text, ok := m.Content.(string)
					require.True(t, ok, "request %d: a tool message's content is text: %v", i+1, m.Content)
					assert.Contains(t, text, want.contains, "request %d", i+1)
					assert.Equal(t, want.failed, strings.HasPrefix(text, "Error: "), "request %d: %s", i+1, text)
				}
			}
			assertFunctionToolsFiles(t, dir)
		})
	}
}

// geminiTurn is turn n of the script as a generateContent response, whole
// or as the chunks of streamGenerateContent?alt=sse. Calls of turns 1 and
// 3 come without an id, as the Gemini API sends them.
func geminiTurn(t *testing.T, n int, streamed bool) []byte {
	t.Helper()
	calls := functionToolsScript[n]
	var parts []map[string]any
	for _, c := range calls {
		var args map[string]any
		require.NoError(t, json.Unmarshal([]byte(c.args), &args))
		fc := map[string]any{"name": c.name, "args": args}
		if n != 1 && n != 3 {
			fc["id"] = c.id
		}
		parts = append(parts, map[string]any{"functionCall": fc})
	}
	usage := map[string]any{"promptTokenCount": 100 + n, "candidatesTokenCount": 20, "totalTokenCount": 120 + n}
	response := func(parts []map[string]any, last bool) []byte {
		cand := map[string]any{"content": map[string]any{"role": "model", "parts": parts}, "index": 0}
		body := map[string]any{"candidates": []any{cand}, "modelVersion": "gemini-2.5-pro", "responseId": fmt.Sprintf("resp-%d", n)}
		if last {
			cand["finishReason"] = "STOP"
			body["usageMetadata"] = usage
		}
		b := mustJSON(t, body)
		recordForSDK(t, "gemini-response", b)
		return b
	}
	if len(calls) == 0 {
		parts = []map[string]any{{"text": "done"}}
	}
	if !streamed {
		return response(parts, true)
	}
	var events [][]byte
	if len(calls) == 0 {
		events = append(events, response([]map[string]any{{"text": "do"}}, false), response([]map[string]any{{"text": "ne"}}, true))
	} else {
		// Each call comes whole, in a chunk of its own.
		for i, p := range parts {
			events = append(events, response([]map[string]any{p}, i == len(parts)-1))
		}
	}
	return sseOf(events...)
}

// geminiRequest is what the Gemini test reads of a request.
type geminiRequest struct {
	Contents []struct {
		Role  string `json:"role"`
		Parts []struct {
			FunctionCall *struct {
				ID   string         `json:"id"`
				Name string         `json:"name"`
				Args map[string]any `json:"args"`
			} `json:"functionCall"`
			FunctionResponse *struct {
				ID       string         `json:"id"`
				Name     string         `json:"name"`
				Response map[string]any `json:"response"`
			} `json:"functionResponse"`
		} `json:"parts"`
	} `json:"contents"`
	Tools []struct {
		FunctionDeclarations []struct {
			Name       string         `json:"name"`
			Parameters map[string]any `json:"parameters"`
		} `json:"functionDeclarations"`
	} `json:"tools"`
}

// TestGeminiScriptedRunWithFunctionTools: an httptest server speaking
// Gemini's generateContent and streamGenerateContent (SSE) replays a
// model's turns through agentloop over codetools' function tools with
// apply_patch among them; the files change, and each next request carries
// the answers as functionResponse parts of one user content, after the
// model content replaying the calls: {"output": ...}, or {"error": ...} for
// a failure, the call's id echoed when the API sent one.
func TestGeminiScriptedRunWithFunctionTools(t *testing.T) {
	for _, streamed := range []bool{false, true} {
		t.Run(map[bool]string{false: "whole", true: "streamed"}[streamed], func(t *testing.T) {
			dir, ct := functionToolsRoot(t, "gemini-2.5-pro")
			method := "generateContent"
			if streamed {
				method = "streamGenerateContent"
			}
			api, bodies := scriptServer(t, func(r *http.Request) error {
				if r.URL.Path != "/v1beta/models/gemini-2.5-pro:"+method {
					return fmt.Errorf("path %s", r.URL.Path)
				}
				if streamed && r.URL.Query().Get("alt") != "sse" {
					return fmt.Errorf("a stream without alt=sse")
				}
				return nil
			}, func(w http.ResponseWriter, _ *http.Request, n int) {
				if streamed {
					w.Header().Set("Content-Type", "text/event-stream")
				}
				_, _ = w.Write(geminiTurn(t, n, streamed))
			})
			send := func(ctx context.Context, history []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
				system, contents, err := provider.GeminiContents(history)
				if err != nil {
					return agentloop.Response{}, err
				}
				req := map[string]any{"contents": contents, "tools": provider.GeminiTools(tools)}
				if system != nil {
					req["systemInstruction"] = system
				}
				body, err := provider.MarshalRequest(req)
				if err != nil {
					return agentloop.Response{}, err
				}
				url := api.URL + "/v1beta/models/gemini-2.5-pro:" + method
				if streamed {
					url += "?alt=sse"
				}
				out, err := post(ctx, url, body)
				if err != nil {
					return agentloop.Response{}, err
				}
				if !streamed {
					return provider.GeminiResponse(out)
				}
				var s provider.GeminiStream
				if err := provider.ReadSSE(ctx, bytes.NewReader(out), func(_ string, data []byte) error { return s.Add(data) }); err != nil {
					return agentloop.Response{}, err
				}
				return s.Response()
			}
			final, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.SystemMessage("You edit files."), agentloop.UserMessage("fix a.txt")},
				send, agentloop.Options{Resolver: ct})
			require.NoError(t, err)
			assert.Equal(t, "done", final.Content)
			raw := bodies()
			require.Len(t, raw, len(functionToolsScript))
			var reqs []geminiRequest
			for _, b := range raw {
				checkGeminiSDK(t, b)
				var r geminiRequest
				require.NoError(t, json.Unmarshal(b, &r))
				reqs = append(reqs, r)
			}

			// Every tool is a function declaration, apply_patch among them.
			var names []string
			for _, tool := range reqs[0].Tools {
				for _, d := range tool.FunctionDeclarations {
					assert.NotNil(t, d.Parameters, d.Name)
					names = append(names, d.Name)
				}
			}
			assert.Contains(t, names, "apply_patch")
			assert.Contains(t, names, "bash")

			// Request i+1 ends with the model content replaying turn i's
			// calls and one user content answering them all.
			for i, answers := range functionToolsAnswers {
				contents := reqs[i+1].Contents
				require.GreaterOrEqual(t, len(contents), 2, "request %d", i+1)
				model, user := contents[len(contents)-2], contents[len(contents)-1]
				require.Equal(t, "model", model.Role, "request %d", i+1)
				require.Equal(t, "user", user.Role, "request %d", i+1)
				require.Len(t, model.Parts, len(answers), "request %d", i+1)
				require.Len(t, user.Parts, len(answers), "request %d", i+1)
				sentID := i != 1 && i != 3
				for j, want := range answers {
					fc := model.Parts[j].FunctionCall
					require.NotNil(t, fc, "request %d part %d", i+1, j)
					assert.Equal(t, want.name, fc.Name)
					assert.JSONEq(t, functionToolsScript[i][j].args, string(mustJSON(t, fc.Args)))
					fr := user.Parts[j].FunctionResponse
					require.NotNil(t, fr, "request %d part %d", i+1, j)
					assert.Equal(t, want.name, fr.Name)
					if sentID {
						assert.Equal(t, want.id, fc.ID, "request %d", i+1)
						assert.Equal(t, want.id, fr.ID, "request %d", i+1)
					} else {
						assert.Empty(t, fc.ID, "request %d: an id the API did not send is not replayed", i+1)
						assert.Empty(t, fr.ID, "request %d", i+1)
					}
					key := "output"
					if want.failed {
						key = "error"
					}
					require.Len(t, fr.Response, 1, "request %d: %v", i+1, fr.Response)
					text, ok := fr.Response[key].(string)
					require.True(t, ok, "request %d: the answer is under %q: %v", i+1, key, fr.Response)
					assert.Contains(t, text, want.contains, "request %d", i+1)
				}
			}
			assertFunctionToolsFiles(t, dir)
		})
	}
}
