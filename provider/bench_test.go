package provider_test

import (
	"encoding/json"
	"io"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// history50 builds a 50-message conversation from a provider's answers: a
// system and a user message, then 24 rounds of an assistant message (parsed
// from answer, so it carries the provider's reasoning state when the format
// has one) with its tool result.
func history50(b *testing.B, parse func(json.RawMessage) (agentloop.Response, error), answer json.RawMessage) []agentloop.Message {
	b.Helper()
	resp, err := parse(answer)
	if err != nil {
		b.Fatal(err)
	}
	h := []agentloop.Message{agentloop.SystemMessage("You are a weather bot."), agentloop.UserMessage("Weather in Paris?")}
	for len(h) < 50 {
		h = append(h, resp.Message())
		for _, c := range resp.ToolCalls {
			h = append(h, agentloop.ToolMessage(llmtoolkit.Result{ToolCallID: c.ID, Name: c.Name, Content: "18°C, cloudy"}))
		}
	}
	return h[:50]
}

// BenchmarkHistory50 measures converting a 50-message history to each
// provider's request and encoding it, as a SendFunc does every turn.
func BenchmarkHistory50(b *testing.B) {
	cases := []struct {
		name    string
		parse   func(json.RawMessage) (agentloop.Response, error)
		answer  string
		convert func([]agentloop.Message) (any, error)
	}{
		{"openai-chat", provider.OpenAIResponse, "openai_response_tool_calls.json", func(h []agentloop.Message) (any, error) {
			return provider.OpenAIMessages(h)
		}},
		{"openai-responses", provider.OpenAIResponsesResponse, "openai_responses_function_call.json", func(h []agentloop.Message) (any, error) {
			return provider.OpenAIResponsesInput(h)
		}},
		{"anthropic", provider.AnthropicResponse, "anthropic_response_tool_use.json", func(h []agentloop.Message) (any, error) {
			_, msgs, err := provider.AnthropicMessages(h)
			return msgs, err
		}},
		{"anthropic-thinking", provider.AnthropicResponse, "anthropic_response_thinking_tool_use.json", func(h []agentloop.Message) (any, error) {
			_, msgs, err := provider.AnthropicMessages(h)
			return msgs, err
		}},
		{"gemini", provider.GeminiResponse, "gemini_response_function_calls.json", func(h []agentloop.Message) (any, error) {
			_, contents, err := provider.GeminiContents(h)
			return contents, err
		}},
		{"gemini-signatures", provider.GeminiResponse, "gemini3_response_call_signature.json", func(h []agentloop.Message) (any, error) {
			_, contents, err := provider.GeminiContents(h)
			return contents, err
		}},
	}
	encoders := []struct {
		name   string
		encode func(any) error
	}{
		{"json.Marshal", func(v any) error { _, err := json.Marshal(v); return err }},
		{"MarshalRequest", func(v any) error { _, err := provider.MarshalRequest(v); return err }},
		{"WriteRequest", func(v any) error { return provider.WriteRequest(io.Discard, v) }},
	}
	for _, tc := range cases {
		for _, enc := range encoders {
			b.Run(tc.name+"/"+enc.name, func(b *testing.B) {
				h := history50(b, tc.parse, testdata(b, tc.answer))
				b.ReportAllocs()
				for b.Loop() {
					v, err := tc.convert(h)
					if err != nil {
						b.Fatal(err)
					}
					if err := enc.encode(v); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkFiveMiBImageRequest measures writing a request body that holds
// a 5 MiB image (a user message's part), in each format and with each
// encoder: time, and the bytes allocated per body.
func BenchmarkFiveMiBImageRequest(b *testing.B) {
	user := agentloop.UserMessage("Look at this.")
	user.Parts = []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", make([]byte, 5<<20))}
	history := []agentloop.Message{user}
	encoders := []struct {
		name   string
		encode func(any) error
	}{
		{"json.Marshal", func(v any) error { _, err := json.Marshal(v); return err }},
		{"MarshalRequest", func(v any) error { _, err := provider.MarshalRequest(v); return err }},
		{"WriteRequest", func(v any) error { return provider.WriteRequest(io.Discard, v) }},
	}
	for _, name := range []string{"anthropic", "openai-responses", "openai-chat", "gemini"} {
		for _, enc := range encoders {
			b.Run(name+"/"+enc.name, func(b *testing.B) {
				t := &testing.T{}
				body := wires[name].body(t, history, nil)
				b.SetBytes(5 << 20)
				b.ReportAllocs()
				for b.Loop() {
					if err := enc.encode(body); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
