//go:build peers

package conformance_test

// The requests this package writes are decoded into the official Go SDKs'
// request types and encoded again: a field the SDK does not know is lost on
// the way, a field of the wrong shape fails to decode, so the comparison
// checks our payloads against code nobody here wrote. The responses the
// parsers read are built with the SDKs' own types in the tests below.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/genai"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// withoutNulls decodes data and drops null members, recursively: the SDKs
// leave out what is null.
func withoutNulls(t *testing.T, data []byte) any {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	require.NoError(t, dec.Decode(&v))
	var clean func(any) any
	clean = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if e == nil {
					delete(x, k)
					continue
				}
				x[k] = clean(e)
			}
		case []any:
			for i, e := range x {
				x[i] = clean(e)
			}
		}
		return v
	}
	return clean(v)
}

// sdkRoundTrip decodes body into T, encodes it again and requires the same
// JSON (nulls aside).
func sdkRoundTrip[T any](t *testing.T, what string, body []byte) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal(body, &v), "%s: the SDK cannot decode the request: %s", what, body)
	again, err := json.Marshal(v)
	require.NoError(t, err)
	assert.Equal(t, withoutNulls(t, body), withoutNulls(t, again), "%s: the SDK's request type loses or changes fields", what)
	return v
}

func checkAnthropicSDK(t *testing.T, body []byte) {
	t.Helper()
	// The SDK takes "system" as text blocks only; the API also takes a string.
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(body, &m))
	var system string
	if raw, ok := m["system"]; ok && json.Unmarshal(raw, &system) == nil {
		if system == "" {
			delete(m, "system")
		} else {
			m["system"] = mustJSON(t, []map[string]string{{"type": "text", "text": system}})
		}
	}
	// The SDK writes a tool_result's string content as one text block, an
	// equivalent form the API also takes: compare in that form.
	var msgs []map[string]any
	require.NoError(t, json.Unmarshal(m["messages"], &msgs))
	for _, msg := range msgs {
		blocks, _ := msg["content"].([]any)
		for _, b := range blocks {
			if bm, ok := b.(map[string]any); ok && bm["type"] == "tool_result" {
				if s, ok := bm["content"].(string); ok {
					bm["content"] = []any{map[string]any{"type": "text", "text": s}}
				}
			}
		}
	}
	m["messages"] = mustJSON(t, msgs)
	p := sdkRoundTrip[anthropic.MessageNewParams](t, "Anthropic", mustJSON(t, m))
	for i, msg := range p.Messages {
		assert.NotEmpty(t, msg.Content, "message %d has no content: the API refuses it", i)
	}
}

func checkGeminiSDK(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Contents          []*genai.Content `json:"contents"`
		SystemInstruction *genai.Content   `json:"systemInstruction,omitempty"`
		Tools             []*genai.Tool    `json:"tools,omitempty"`
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&req), "Gemini: the SDK's types do not take the request: %s", body)
	again, err := json.Marshal(req)
	require.NoError(t, err)
	assert.Equal(t, withoutNulls(t, body), withoutNulls(t, again), "Gemini: the SDK's types lose or change fields")
	for i, c := range req.Contents {
		require.NotEmpty(t, c.Parts, "content %d has no parts", i)
		for j, p := range c.Parts {
			assert.NotEqual(t, genai.Part{}, *p, "content %d part %d is empty: the API refuses it", i, j)
		}
	}
}

func checkOpenAIResponsesSDK(t *testing.T, body []byte) {
	t.Helper()
	sdkRoundTrip[responses.ResponseNewParams](t, "OpenAI Responses", body)
}

func checkOpenAIChatSDK(t *testing.T, body []byte) {
	t.Helper()
	sdkRoundTrip[openai.ChatCompletionNewParams](t, "OpenAI Chat", body)
}

// The parsers read responses built with the SDKs' own types.

func TestAnthropicReadsSDKBuiltMessage(t *testing.T) {
	msg := anthropic.NewAssistantMessage(
		anthropic.NewThinkingBlock("sig-1", "I should look it up."),
		anthropic.NewRedactedThinkingBlock("cmVkYWN0ZWQ="),
		anthropic.NewTextBlock("Looking it up."),
		anthropic.NewToolUseBlock("toolu_1", map[string]any{"location": "Paris"}, "get_weather"),
	)
	data := mustJSON(t, msg)
	resp, err := provider.AnthropicResponse(data)
	require.NoError(t, err)
	assert.Equal(t, "Looking it up.", resp.Content)
	require.Len(t, resp.ToolCalls, 1)
	assert.Equal(t, llmtoolkit.Call{ID: "toolu_1", Name: "get_weather", Arguments: map[string]any{"location": "Paris"}}, resp.ToolCalls[0])

	// Replayed, the blocks decode into the SDK's block params unchanged.
	_, msgs, err := provider.AnthropicMessages([]agentloop.Message{resp.Message()})
	require.NoError(t, err)
	var back anthropic.MessageParam
	require.NoError(t, json.Unmarshal(mustJSON(t, msgs[0]), &back))
	require.Len(t, back.Content, 4)
	require.NotNil(t, back.Content[0].OfThinking)
	assert.Equal(t, "sig-1", back.Content[0].OfThinking.Signature)
	require.NotNil(t, back.Content[1].OfRedactedThinking)
	assert.Equal(t, "cmVkYWN0ZWQ=", back.Content[1].OfRedactedThinking.Data)
	require.NotNil(t, back.Content[3].OfToolUse)
}

func TestGeminiReadsSDKBuiltResponse(t *testing.T) {
	sdkResp := &genai.GenerateContentResponse{
		Candidates: []*genai.Candidate{{
			Content: &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{
				{Text: "thinking about it", Thought: true},
				{FunctionCall: &genai.FunctionCall{ID: "fc1", Name: "get_weather", Args: map[string]any{"location": "Paris"}}, ThoughtSignature: []byte("signature-bytes")},
				{FunctionCall: &genai.FunctionCall{ID: "fc2", Name: "get_time", Args: map[string]any{"timezone": "UTC"}}},
			}},
			FinishReason: genai.FinishReasonStop,
		}},
		UsageMetadata: &genai.GenerateContentResponseUsageMetadata{PromptTokenCount: 10, CandidatesTokenCount: 5, ThoughtsTokenCount: 7},
	}
	resp, err := provider.GeminiResponse(mustJSON(t, sdkResp))
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 2)
	assert.Equal(t, "fc1", resp.ToolCalls[0].ID)
	assert.Equal(t, "STOP", resp.StopReason)
	assert.Equal(t, agentloop.Usage{InputTokens: 10, OutputTokens: 12, ContextTokens: 10, ReasoningTokens: 7}, resp.Usage)

	// Replayed through the fallback (the message was rebuilt from its calls
	// alone), the signature still lands on its own functionCall part.
	m := agentloop.AssistantMessage("", resp.ToolCalls...)
	_, contents, err := provider.GeminiContents([]agentloop.Message{agentloop.UserMessage("hi"), m})
	require.NoError(t, err)
	var back []*genai.Content
	require.NoError(t, json.Unmarshal(mustJSON(t, contents), &back))
	require.Len(t, back[1].Parts, 2)
	assert.Equal(t, []byte("signature-bytes"), back[1].Parts[0].ThoughtSignature)
	assert.Empty(t, back[1].Parts[1].ThoughtSignature)
}

func TestOpenAIResponsesReadsSDKBuiltOutput(t *testing.T) {
	items := []responses.ResponseInputItemUnionParam{
		{OfReasoning: &responses.ResponseReasoningItemParam{ID: "rs_1", Summary: []responses.ResponseReasoningItemSummaryParam{}, EncryptedContent: openai.String("enc")}},
		responses.ResponseInputItemParamOfFunctionCall(`{"location":"Paris"}`, "call_1", "get_weather"),
	}
	resp, err := provider.OpenAIResponsesResponse(mustJSON(t, items))
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 1)
	assert.Equal(t, "call_1", resp.ToolCalls[0].ID)
	assert.Equal(t, map[string]any{"location": "Paris"}, resp.ToolCalls[0].Arguments)

	input, err := provider.OpenAIResponsesInput([]agentloop.Message{resp.Message()})
	require.NoError(t, err)
	var back []responses.ResponseInputItemUnionParam
	require.NoError(t, json.Unmarshal(mustJSON(t, input), &back))
	require.Len(t, back, 2)
	require.NotNil(t, back[0].OfReasoning)
	assert.Equal(t, "enc", back[0].OfReasoning.EncryptedContent.Value)
	require.NotNil(t, back[1].OfFunctionCall)
	assert.Equal(t, "call_1", back[1].OfFunctionCall.CallID)
}

func TestOpenAIChatReadsSDKBuiltMessage(t *testing.T) {
	msg := openai.ChatCompletionAssistantMessageParam{
		ToolCalls: []openai.ChatCompletionMessageToolCallUnionParam{{OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
			ID: "call_1", Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: "get_weather", Arguments: `{"location":"Paris"}`},
		}}},
	}
	calls, err := provider.OpenAIToolCalls(mustJSON(t, msg))
	require.NoError(t, err)
	assert.Equal(t, []llmtoolkit.Call{{ID: "call_1", Name: "get_weather", Arguments: map[string]any{"location": "Paris"}}}, calls)
}

// TestAnthropicUsageCountsTheCachedPrompt: the cache counts our parser
// reads are the ones the SDK's Usage reads, and ContextTokens adds them to
// input_tokens (which leaves the cached prompt out).
func TestAnthropicUsageCountsTheCachedPrompt(t *testing.T) {
	body := []byte(`{"id":"msg_1","type":"message","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn",
		"usage":{"input_tokens":12,"cache_creation_input_tokens":2000,"cache_read_input_tokens":90000,"output_tokens":5}}`)
	var sdk anthropic.Message
	require.NoError(t, json.Unmarshal(body, &sdk))
	resp, err := provider.AnthropicResponse(body)
	require.NoError(t, err)
	assert.Equal(t, int(sdk.Usage.InputTokens+sdk.Usage.CacheCreationInputTokens+sdk.Usage.CacheReadInputTokens), resp.Usage.ContextTokens)
	assert.Equal(t, 92012, resp.Usage.ContextTokens)
}

// checkOpenAIChatCompletionSDK reads a Chat Completions response the
// provider tests' servers send with the SDK's type: every field is one the
// SDK knows, every call a function call with an id, a name and JSON
// arguments.
func checkOpenAIChatCompletionSDK(t *testing.T, body []byte) {
	t.Helper()
	var c openai.ChatCompletion
	require.NoError(t, json.Unmarshal(body, &c), "%s", body)
	assert.Empty(t, c.JSON.ExtraFields, "fields the SDK does not know: %s", body)
	assert.Empty(t, c.Usage.JSON.ExtraFields)
	require.NotEmpty(t, c.Choices)
	for _, ch := range c.Choices {
		assert.Empty(t, ch.JSON.ExtraFields)
		assert.Empty(t, ch.Message.JSON.ExtraFields)
		for _, tc := range ch.Message.ToolCalls {
			fn := tc.AsFunction()
			assert.Equal(t, "function", tc.Type)
			assert.Empty(t, fn.JSON.ExtraFields)
			assert.Empty(t, fn.Function.JSON.ExtraFields)
			assert.NotEmpty(t, fn.ID)
			assert.NotEmpty(t, fn.Function.Name)
			assert.True(t, json.Valid([]byte(fn.Function.Arguments)), "arguments %q", fn.Function.Arguments)
		}
	}
}

// checkOpenAIChatChunkSDK reads one chunk of a streamed Chat Completions
// response with the SDK's type, as checkOpenAIChatCompletionSDK does.
func checkOpenAIChatChunkSDK(t *testing.T, body []byte) {
	t.Helper()
	var c openai.ChatCompletionChunk
	require.NoError(t, json.Unmarshal(body, &c), "%s", body)
	assert.Empty(t, c.JSON.ExtraFields, "fields the SDK does not know: %s", body)
	assert.Equal(t, "chat.completion.chunk", string(c.Object))
	for _, ch := range c.Choices {
		assert.Empty(t, ch.JSON.ExtraFields)
		assert.Empty(t, ch.Delta.JSON.ExtraFields)
		for _, tc := range ch.Delta.ToolCalls {
			assert.Empty(t, tc.JSON.ExtraFields)
			assert.Empty(t, tc.Function.JSON.ExtraFields)
		}
	}
}

// checkGeminiResponseSDK reads a generateContent response (or one chunk of
// a stream) the provider tests' servers send with the SDK's type and writes
// it again: a field the SDK does not know is lost on the way (its
// UnmarshalJSON ignores DisallowUnknownFields).
func checkGeminiResponseSDK(t *testing.T, body []byte) {
	t.Helper()
	var r genai.GenerateContentResponse
	require.NoError(t, json.Unmarshal(body, &r), "Gemini: the SDK's type does not take the response: %s", body)
	again, err := json.Marshal(&r)
	require.NoError(t, err)
	// The SDK leaves out a candidate's index 0 (omitempty).
	want := withoutNulls(t, body).(map[string]any)
	cands, _ := want["candidates"].([]any)
	for _, c := range cands {
		if m, ok := c.(map[string]any); ok && m["index"] == json.Number("0") {
			delete(m, "index")
		}
	}
	assert.Equal(t, want, withoutNulls(t, again), "Gemini: the SDK's response type loses or changes fields")
	require.NotEmpty(t, r.Candidates)
	require.NotNil(t, r.Candidates[0].Content)
	for _, p := range r.Candidates[0].Content.Parts {
		if p.FunctionCall != nil {
			assert.NotEmpty(t, p.FunctionCall.Name)
			assert.NotNil(t, p.FunctionCall.Args)
		}
	}
}

// TestOpenAIResponsesNativeDeltaEventsInSDK reads the recorded stream whose
// native calls stream their payloads (provider's testdata) with openai-go's
// event types: the shell_call_command events and the added and done items
// carry only fields the SDK knows, under its names. openai-go defines no
// type for response.apply_patch_call_operation_diff.delta and .done (their
// item_id, output_index, delta and diff are as other SDKs of the API name
// them): those are only counted.
func TestOpenAIResponsesNativeDeltaEventsInSDK(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(coreRoot(t), "provider", "testdata", "openai_responses_native_deltas_stream.sse"))
	require.NoError(t, err)
	seen := map[string]int{}
	require.NoError(t, provider.ReadSSE(t.Context(), bytes.NewReader(data), func(event string, d []byte) error {
		var u responses.ResponseStreamEventUnion
		require.NoError(t, json.Unmarshal(d, &u), "%s", d)
		require.Equal(t, event, u.Type)
		seen[u.Type]++
		switch u.Type {
		case "response.shell_call_command.added":
			e := u.AsResponseShellCallCommandAdded()
			assert.Empty(t, e.JSON.ExtraFields, "%s", d)
			assert.True(t, e.JSON.Command.Valid() && e.JSON.CommandIndex.Valid() && e.JSON.OutputIndex.Valid(), "%s", d)
		case "response.shell_call_command.delta":
			e := u.AsResponseShellCallCommandDelta()
			assert.Empty(t, e.JSON.ExtraFields, "%s", d)
			assert.True(t, e.JSON.Delta.Valid() && e.JSON.CommandIndex.Valid() && e.JSON.OutputIndex.Valid(), "%s", d)
		case "response.shell_call_command.done":
			e := u.AsResponseShellCallCommandDone()
			assert.Empty(t, e.JSON.ExtraFields, "%s", d)
			assert.True(t, e.JSON.Command.Valid() && e.JSON.CommandIndex.Valid() && e.JSON.OutputIndex.Valid(), "%s", d)
		case "response.output_item.added", "response.output_item.done":
			item := u.AsResponseOutputItemAdded().Item
			switch item.Type {
			case "apply_patch_call":
				c := item.AsApplyPatchCall()
				assert.Empty(t, c.JSON.ExtraFields, "%s", d)
				assert.True(t, c.Operation.JSON.Type.Valid() && c.Operation.JSON.Path.Valid(), "%s", d)
				assert.NotEmpty(t, c.CallID)
			case "shell_call":
				c := item.AsShellCall()
				assert.Empty(t, c.JSON.ExtraFields, "%s", d)
				assert.Empty(t, c.Action.JSON.ExtraFields, "%s", d)
				assert.NotEmpty(t, c.CallID)
			default:
				t.Errorf("unexpected item %s", d)
			}
		}
		return nil
	}))
	assert.Equal(t, 3, seen["response.shell_call_command.delta"])
	assert.Equal(t, 2, seen["response.apply_patch_call_operation_diff.done"])
	assert.Equal(t, 3, seen["response.output_item.done"])
}
