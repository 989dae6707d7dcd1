package provider_test

import (
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// updateToolSearchGolden writes the tool search golden files again:
// go test ./provider -run TestToolSearch -update-golden
var updateToolSearchGolden = flag.Bool("update-golden", false, "write the tool search golden files again")

// searchWorkspace has one tool offered at once and two deferred ones.
func searchWorkspace() *lt.Fake {
	obj := func(props ...string) map[string]any {
		p, req := map[string]any{}, []any{}
		for _, name := range props {
			p[name] = map[string]any{"type": "string"}
			req = append(req, name)
		}
		return map[string]any{"type": "object", "properties": p, "required": req, "additionalProperties": false}
	}
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	read := llmtoolkit.MustTool("read_file", "Reads a file.", obj("path"))
	post := llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", obj("channel", "text"))
	post.Deferred = true
	issue := llmtoolkit.MustTool("github_create_issue", "Create an issue in a GitHub repository.", obj("repo", "title"))
	issue.Deferred = true
	return (&lt.Fake{}).Add(read, ok).Add(post, ok).Add(issue, ok)
}

// searchWire builds one provider's request body.
type searchWire struct {
	body func(t *testing.T, history []agentloop.Message, tools []llmtoolkit.Tool) []byte
	sdk  func(t *testing.T, body []byte)
}

var searchWires = map[string]searchWire{
	"anthropic": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		_, msgs, err := provider.AnthropicMessages(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": msgs, "tools": provider.AnthropicTools(tools)})
	}, checkAnthropicSDK},
	"anthropic-native": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		_, msgs, err := provider.AnthropicMessages(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"model": "claude-sonnet-4-5", "max_tokens": 4096, "messages": msgs, "tools": provider.AnthropicToolsWithSearch(tools, provider.AnthropicToolSearchBM25)})
	}, checkAnthropicSDK},
	"openai-chat": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		msgs, err := provider.OpenAIMessages(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"model": "gpt-4.1", "messages": msgs, "tools": provider.OpenAITools(tools)})
	}, checkOpenAIChatSDK},
	"openai-responses": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		input, err := provider.OpenAIResponsesInput(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"model": "gpt-5.4", "input": input, "tools": provider.OpenAIResponsesTools(tools), "store": false})
	}, checkOpenAIResponsesSDK},
	"openai-responses-native": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		input, err := provider.OpenAIResponsesInput(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"model": "gpt-5.4", "input": input, "tools": provider.OpenAIResponsesToolsWithSearch(tools), "store": false})
	}, checkOpenAIResponsesSDK},
	"gemini": {func(t *testing.T, h []agentloop.Message, tools []llmtoolkit.Tool) []byte {
		_, contents, err := provider.GeminiContents(h)
		require.NoError(t, err)
		return mustJSON(t, map[string]any{"contents": contents, "tools": provider.GeminiTools(tools)})
	}, checkGeminiSDK},
}

// recording wraps a model: each request's body, as the wire writes it,
// is kept, then the model answers.
func recording(t *testing.T, w searchWire, send agentloop.SendFunc, bodies *[]json.RawMessage) agentloop.SendFunc {
	return func(ctx context.Context, msgs []agentloop.Message, tools []llmtoolkit.Tool) (agentloop.Response, error) {
		body := w.body(t, msgs, tools)
		w.sdk(t, body)
		*bodies = append(*bodies, body)
		return send(ctx, msgs, tools)
	}
}

// golden compares bodies with testdata/NAME, or writes it with
// -update-golden.
func goldenBodies(t *testing.T, name string, bodies []json.RawMessage) {
	t.Helper()
	got, err := json.MarshalIndent(bodies, "", "  ")
	require.NoError(t, err)
	path := filepath.Join("testdata", name)
	if *updateToolSearchGolden {
		require.NoError(t, os.WriteFile(path, append(got, '\n'), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.JSONEq(t, string(want), string(got), "%s differs: run with -update-golden and review the diff", name)
}

// TestToolSearchClientSide: in each provider's format, a scripted model
// searches with toolsearch's tool_search, then calls the tool it found.
// The first request offers the tools not deferred and tool_search; the
// second appends the found tool, the first request's tools unchanged (the
// provider's cached prefix holds). The bodies are golden files.
func TestToolSearchClientSide(t *testing.T) {
	for _, format := range []string{"anthropic", "openai-chat", "openai-responses", "gemini"} {
		t.Run(format, func(t *testing.T) {
			fake := searchWorkspace()
			s := toolsearch.New(fake)
			model := lt.NewScriptedModel(t,
				lt.CallTools(llmtoolkit.Call{ID: "call_search_1", Name: "tool_search", Arguments: map[string]any{"query": "post a message in a Slack channel", "limit": 1}}),
				lt.CallTools(llmtoolkit.Call{ID: "call_post_2", Name: "slack_post_message", Arguments: map[string]any{"channel": "C024BE91L", "text": "Deploy finished"}}),
				lt.Reply("Posted."),
			)
			var bodies []json.RawMessage
			_, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("Tell #deploys that the deploy finished.")},
				recording(t, searchWires[format], model.Send, &bodies), agentloop.Options{Resolver: s, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			require.Len(t, bodies, 3)
			assert.Len(t, fake.CallsTo("slack_post_message"), 1)
			toolsKey := map[string]string{"gemini": "tools.0.functionDeclarations"}[format]
			if toolsKey == "" {
				toolsKey = "tools"
			}
			var first, second []json.RawMessage
			require.NoError(t, json.Unmarshal(field(t, bodies[0], toolsKey), &first))
			require.NoError(t, json.Unmarshal(field(t, bodies[1], toolsKey), &second))
			require.Len(t, first, 2)
			require.Len(t, second, 3)
			assert.Equal(t, first, second[:2], "the tools offered before are sent unchanged, first")
			assert.Contains(t, string(second[2]), "slack_post_message")
			goldenBodies(t, "tool_search_client_"+format+".json", bodies)
		})
	}
}

// TestToolSearchNative: the Anthropic and OpenAI Responses codecs write
// the deferred tools with defer_loading and the provider's search tool;
// a response in which the provider's search found a tool and the model
// called it is read (the call, the loaded names), and the search's blocks
// or items are replayed in the next request as they came. The bodies are
// golden files.
func TestToolSearchNative(t *testing.T) {
	cases := []struct {
		format, fixture string
		parse           func(json.RawMessage) (agentloop.Response, error)
		refs            func(json.RawMessage) ([]string, error)
		final           string
	}{
		{"anthropic-native", "anthropic_response_tool_search.json", provider.AnthropicResponse, provider.AnthropicToolReferences,
			`{"id":"msg_02","type":"message","role":"assistant","content":[{"type":"text","text":"Posted."}],"stop_reason":"end_turn"}`},
		{"openai-responses-native", "openai_responses_tool_search.json", provider.OpenAIResponsesResponse, provider.OpenAIResponsesToolReferences,
			`{"id":"resp_02","status":"completed","output":[{"type":"message","id":"msg_02","role":"assistant","status":"completed","content":[{"type":"output_text","text":"Posted.","annotations":[]}]}]}`},
	}
	for _, c := range cases {
		t.Run(c.format, func(t *testing.T) {
			fixture := testdata(t, c.fixture)
			refs, err := c.refs(fixture)
			require.NoError(t, err)
			assert.Equal(t, []string{"slack_post_message"}, refs)

			fake := searchWorkspace()
			model := lt.NewScriptedModel(t,
				lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
					return c.parse(fixture)
				}),
				lt.Respond(func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
					return c.parse(json.RawMessage(c.final))
				}),
			)
			var bodies []json.RawMessage
			resp, _, err := agentloop.Run(t.Context(), []agentloop.Message{agentloop.UserMessage("Tell #deploys that the deploy finished.")},
				recording(t, searchWires[c.format], model.Send, &bodies), agentloop.Options{Resolver: fake, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			assert.Equal(t, "Posted.", resp.Content)
			require.Len(t, bodies, 2)
			calls := fake.CallsTo("slack_post_message")
			require.Len(t, calls, 1)
			assert.Equal(t, map[string]any{"channel": "C024BE91L", "text": "Deploy finished"}, calls[0].Arguments)

			var tools []map[string]any
			require.NoError(t, json.Unmarshal(field(t, bodies[0], "tools"), &tools))
			deferred := map[string]bool{}
			for _, tool := range tools {
				if name, _ := tool["name"].(string); name != "" {
					deferred[name] = tool["defer_loading"] == true
				}
			}
			assert.False(t, deferred["read_file"])
			assert.True(t, deferred["slack_post_message"])
			assert.True(t, deferred["github_create_issue"])
			switch c.format {
			case "anthropic-native":
				assert.JSONEq(t, `{"type":"tool_search_tool_bm25_20251119","name":"tool_search_tool_bm25"}`, string(mustJSON(t, tools[0])))
				assert.JSONEq(t, string(field(t, fixture, "content")), string(field(t, bodies[1], "messages.1.content")), "the search's blocks are replayed as they came")
			case "openai-responses-native":
				assert.JSONEq(t, `{"type":"tool_search"}`, string(mustJSON(t, tools[len(tools)-1])))
				assert.JSONEq(t, string(field(t, fixture, "output.0")), string(field(t, bodies[1], "input.1")), "the tool_search_call is replayed")
				assert.JSONEq(t, string(field(t, fixture, "output.1")), string(field(t, bodies[1], "input.2")), "the tool_search_output is replayed")
			}
			goldenBodies(t, "tool_search_"+c.format+".json", bodies)
		})
	}
}

// TestToolReferencesRead: the readers take every form of their input,
// ignore failed searches and other blocks, name each tool once, and
// refuse what is not JSON.
func TestToolReferencesRead(t *testing.T) {
	msg := testdata(t, "anthropic_response_tool_search.json")
	for _, in := range []json.RawMessage{msg, field(t, msg, "content")} {
		names, err := provider.AnthropicToolReferences(in)
		require.NoError(t, err)
		assert.Equal(t, []string{"slack_post_message"}, names)
	}
	names, err := provider.AnthropicToolReferences(json.RawMessage(`[
		{"type":"tool_search_tool_result","tool_use_id":"s1","content":{"type":"tool_search_tool_result_error","error_code":"unavailable"}},
		{"type":"tool_search_tool_result","tool_use_id":"s2","content":{"type":"tool_search_tool_search_result","tool_references":[{"type":"tool_reference","tool_name":"a"},{"type":"tool_reference","tool_name":"b"},{"type":"tool_reference","tool_name":"a"}]}},
		{"type":"text","text":"x"}]`))
	require.NoError(t, err)
	assert.Equal(t, []string{"a", "b"}, names)
	_, err = provider.AnthropicToolReferences(json.RawMessage(`{`))
	assert.ErrorIs(t, err, provider.ErrInvalidPayload)

	names, err = provider.OpenAIResponsesToolReferences(json.RawMessage(`{"output":[{"type":"tool_search_output","tools":[
		{"type":"namespace","name":"crm","tools":[{"type":"function","name":"crm_find"}]},{"type":"function","name":"f"},{"type":"function","name":"f"}]}]}`))
	require.NoError(t, err)
	assert.Equal(t, []string{"crm_find", "f"}, names)
	_, err = provider.OpenAIResponsesToolReferences(json.RawMessage(`{"output":[{"type":"tool_search_output","tools":[{"type":"namespace","tools":[{"type":"namespace","tools":[]}]}]}]}`))
	assert.ErrorIs(t, err, provider.ErrInvalidPayload)
	_, err = provider.OpenAIResponsesToolReferences(json.RawMessage(`[`))
	assert.ErrorIs(t, err, provider.ErrInvalidPayload)
}

// FuzzToolReferences: the readers never panic on hostile bodies, and a
// name they answer occurs in the body.
func FuzzToolReferences(f *testing.F) {
	f.Add([]byte(`{"content":[{"type":"tool_search_tool_result","content":{"type":"tool_search_tool_search_result","tool_references":[{"tool_name":"a"}]}}]}`))
	f.Add([]byte(`{"output":[{"type":"tool_search_output","tools":[{"type":"namespace","tools":[{"type":"function","name":"b"}]}]}]}`))
	f.Add([]byte(`[{"type":"tool_search_tool_result","content":null}]`))
	f.Add([]byte(`{"output":[{"type":"tool_search_output","tools":"x"}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, read := range []func(json.RawMessage) ([]string, error){provider.AnthropicToolReferences, provider.OpenAIResponsesToolReferences} {
			names, err := read(body)
			if err != nil {
				continue
			}
			for _, n := range names {
				assert.NotEmpty(t, n)
			}
		}
	})
}
