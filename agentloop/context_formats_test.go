package agentloop_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// The rules each provider documents for a conversation's history, checked
// on what package provider's encoders write for it. A cleared or compacted
// history must still follow them all.
//
//   - OpenAI Chat Completions: "messages with role 'tool' must be a
//     response to a preceding message with 'tool_calls'": each assistant
//     message's tool_calls are answered, each id once, by the tool
//     messages that directly follow it, and there is no other tool
//     message.
//   - OpenAI Responses: each function_call_output answers a function_call
//     given earlier (same call_id), each function_call is answered once,
//     and a reasoning item is sent with the item that followed it (never
//     last, never followed by an output or a user message); reasoning
//     items keep their encrypted content.
//   - Anthropic Messages: the first message is the user's; each tool_use
//     is answered by a tool_result in the very next message, a user
//     message whose tool_result blocks come first; a tool_result answers a
//     tool_use of the message just before it; no message is empty;
//     thinking blocks come first in their turn, each with its signature.
//   - Gemini: a model turn's functionCall parts are answered by the next
//     turn, a user turn of as many functionResponse parts, in order and
//     with the same names; the first functionCall part of a turn that had
//     a thought signature still has it.

// validateFormats checks h against every format's rules; sigs are the
// reasoning signatures the history's assistant messages must still carry
// (by format: "anthropic", "gemini", "openai-responses").
func validateFormats(h []agentloop.Message) error {
	for name, check := range map[string]func([]agentloop.Message) error{
		"openai chat":      validateOpenAIChat,
		"openai responses": validateOpenAIResponses,
		"anthropic":        validateAnthropic,
		"gemini":           validateGemini,
	} {
		if err := check(h); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

func generic(v any) ([]map[string]any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out []map[string]any
	return out, json.Unmarshal(data, &out)
}

func str(m map[string]any, k string) string { s, _ := m[k].(string); return s }

func list(m map[string]any, k string) []map[string]any {
	raw, _ := m[k].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		if mm, ok := r.(map[string]any); ok {
			out = append(out, mm)
		}
	}
	return out
}

func validateOpenAIChat(h []agentloop.Message) error {
	msgs, err := provider.OpenAIMessages(h)
	if err != nil {
		return err
	}
	g, err := generic(msgs)
	if err != nil {
		return err
	}
	for i := 0; i < len(g); i++ {
		m := g[i]
		switch str(m, "role") {
		case "tool":
			return fmt.Errorf("message %d: a tool message that does not follow an assistant message's tool_calls", i)
		case "assistant":
			calls := list(m, "tool_calls")
			want := map[string]bool{}
			for _, c := range calls {
				want[str(c, "id")] = true
			}
			for len(want) > 0 {
				i++
				if i >= len(g) || str(g[i], "role") != "tool" {
					return fmt.Errorf("message %d: tool_calls %v not answered", i, want)
				}
				id := str(g[i], "tool_call_id")
				if !want[id] {
					return fmt.Errorf("message %d: tool message for %q, which the assistant message did not call (or answered twice)", i, id)
				}
				if _, ok := g[i]["content"].(string); !ok {
					return fmt.Errorf("message %d: tool message without content", i)
				}
				delete(want, id)
			}
		}
	}
	return nil
}

func validateOpenAIResponses(h []agentloop.Message) error {
	items, err := provider.OpenAIResponsesInput(h)
	if err != nil {
		return err
	}
	g, err := generic(items)
	if err != nil {
		return err
	}
	called, answered := map[string]bool{}, map[string]bool{}
	for i, it := range g {
		switch str(it, "type") {
		case "reasoning":
			if str(it, "encrypted_content") == "" {
				return fmt.Errorf("item %d: reasoning item lost its encrypted content", i)
			}
			if i+1 >= len(g) || (str(g[i+1], "type") != "function_call" && str(g[i+1], "type") != "message" && str(g[i+1], "type") != "reasoning") ||
				(str(g[i+1], "type") == "message" && str(g[i+1], "role") != "assistant") {
				return fmt.Errorf("item %d: reasoning item without the item that followed it", i)
			}
		case "function_call":
			called[str(it, "call_id")] = true
		case "function_call_output":
			id := str(it, "call_id")
			if !called[id] || answered[id] {
				return fmt.Errorf("item %d: output for call %q not called before, or answered twice", i, id)
			}
			answered[id] = true
		}
	}
	for id := range called {
		if !answered[id] {
			return fmt.Errorf("call %q not answered", id)
		}
	}
	return nil
}

func validateAnthropic(h []agentloop.Message) error {
	_, msgs, err := provider.AnthropicMessages(h)
	if err != nil {
		return err
	}
	g, err := generic(msgs)
	if err != nil {
		return err
	}
	if len(g) == 0 || str(g[0], "role") != "user" {
		return fmt.Errorf("the first message is not the user's")
	}
	var pending []string // tool_use ids of the message before
	for i, m := range g {
		blocks := list(m, "content")
		if len(blocks) == 0 {
			return fmt.Errorf("message %d is empty", i)
		}
		var results []string
		sawOther := false
		for _, b := range blocks {
			if str(b, "type") == "tool_result" {
				if sawOther {
					return fmt.Errorf("message %d: a tool_result after another block", i)
				}
				results = append(results, str(b, "tool_use_id"))
			} else {
				sawOther = true
			}
		}
		if str(m, "role") == "user" {
			if !sameSet(pending, results) {
				return fmt.Errorf("message %d: tool_results %v do not answer the tool_uses %v of the message before", i, results, pending)
			}
			pending = nil
			continue
		}
		if len(pending) > 0 {
			return fmt.Errorf("message %d: tool_uses %v not answered by the next message", i, pending)
		}
		if len(results) > 0 {
			return fmt.Errorf("message %d: tool_result in an assistant message", i)
		}
		sawContent := false
		for _, b := range blocks {
			switch str(b, "type") {
			case "thinking":
				if sawContent {
					return fmt.Errorf("message %d: a thinking block after text or tool_use", i)
				}
				if str(b, "signature") == "" {
					return fmt.Errorf("message %d: a thinking block without its signature", i)
				}
			case "tool_use":
				sawContent = true
				pending = append(pending, str(b, "id"))
			default:
				sawContent = true
			}
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("the last message's tool_uses %v are not answered", pending)
	}
	return nil
}

func validateGemini(h []agentloop.Message) error {
	_, contents, err := provider.GeminiContents(h)
	if err != nil {
		return err
	}
	g, err := generic(contents)
	if err != nil {
		return err
	}
	var pending []string
	for i, c := range g {
		parts := list(c, "parts")
		var responses, calls []string
		for _, p := range parts {
			if fr, ok := p["functionResponse"].(map[string]any); ok {
				responses = append(responses, str(fr, "name"))
			}
			if fc, ok := p["functionCall"].(map[string]any); ok {
				calls = append(calls, str(fc, "name"))
			}
		}
		if len(pending) > 0 || len(responses) > 0 {
			if str(c, "role") != "user" || !slices.Equal(pending, responses) || len(responses) != len(parts) {
				return fmt.Errorf("content %d: function responses %v do not answer the calls %v of the turn before", i, responses, pending)
			}
		}
		pending = nil
		if str(c, "role") == "model" && len(calls) > 0 {
			pending = calls
		}
	}
	if len(pending) > 0 {
		return fmt.Errorf("the last turn's calls %v are not answered", pending)
	}
	// Signatures: each model turn recorded with one keeps it on its first call.
	for _, m := range h {
		if m.Role != agentloop.RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		var st struct{ Parts []map[string]any }
		if raw, ok := m.Provider[provider.StateGemini]; !ok || json.Unmarshal(raw, &st) != nil {
			continue
		}
		c, ok := provider.GeminiModelContent(m)
		if !ok {
			return fmt.Errorf("a model turn with calls was left out")
		}
		parts, err := generic(c.Parts)
		if err != nil {
			return err
		}
		for _, p := range parts {
			if _, isCall := p["functionCall"]; isCall {
				if str(p, "thoughtSignature") == "" {
					return fmt.Errorf("the first functionCall of a signed turn lost its thoughtSignature")
				}
				break
			}
		}
	}
	return nil
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// signedTurn builds the answer of turn n that calls calls, as the three
// formats with reasoning state would have sent it (a signed thinking
// block, a thought signature, an encrypted reasoning item), parsed by
// package provider: the assistant message carries the state of all
// three, each converter reading its own.
func signedTurn(n int, calls []llmtoolkit.Call) (agentloop.Response, error) {
	var ablocks, gparts, ritems []string
	// Reasoning of a realistic size: about 1 KB of thinking per turn.
	thought := fmt.Sprintf("plan for turn %d: ", n) + strings.Repeat("weigh the next file to read against what the tests said. ", 18)
	ablocks = append(ablocks, fmt.Sprintf(`{"type":"thinking","thinking":%q,"signature":"sig-anthropic-%d-%s"}`, thought, n, strings.Repeat("A", 300)))
	ritems = append(ritems, fmt.Sprintf(`{"type":"reasoning","id":"rs_%d","summary":[],"encrypted_content":"enc-%d-%s"}`, n, n, strings.Repeat("B", 1000)))
	gparts = append(gparts, fmt.Sprintf(`{"text":%q,"thought":true}`, thought))
	for i, c := range calls {
		args, err := json.Marshal(c.Arguments)
		if err != nil {
			return agentloop.Response{}, err
		}
		ablocks = append(ablocks, fmt.Sprintf(`{"type":"tool_use","id":%q,"name":%q,"input":%s}`, c.ID, c.Name, args))
		sig := ""
		if i == 0 {
			sig = fmt.Sprintf(`,"thoughtSignature":"sig-gemini-%d"`, n)
		}
		gparts = append(gparts, fmt.Sprintf(`{"functionCall":{"id":%q,"name":%q,"args":%s}%s}`, c.ID, c.Name, args, sig))
		ritems = append(ritems, fmt.Sprintf(`{"type":"function_call","id":"fc_%d_%d","call_id":%q,"name":%q,"arguments":%q}`, n, i, c.ID, c.Name, args))
	}
	a, err := provider.AnthropicResponse(json.RawMessage(`{"content":[` + strings.Join(ablocks, ",") + `],"stop_reason":"tool_use"}`))
	if err != nil {
		return a, err
	}
	g, err := provider.GeminiResponse(json.RawMessage(`{"candidates":[{"content":{"role":"model","parts":[` + strings.Join(gparts, ",") + `]},"finishReason":"STOP"}]}`))
	if err != nil {
		return a, err
	}
	r, err := provider.OpenAIResponsesResponse(json.RawMessage(`{"output":[` + strings.Join(ritems, ",") + `]}`))
	if err != nil {
		return a, err
	}
	state := llmtoolkit.ProviderState{}
	for _, s := range []llmtoolkit.ProviderState{a.Provider, g.Provider, r.Provider} {
		for k, v := range s {
			state[k] = v
		}
	}
	a.Provider = state
	for i := range a.ToolCalls {
		cs := llmtoolkit.ProviderState{}
		for _, other := range []agentloop.Response{g, r} {
			if i < len(other.ToolCalls) {
				for k, v := range other.ToolCalls[i].Provider {
					cs[k] = v
				}
			}
		}
		if len(cs) > 0 {
			a.ToolCalls[i].Provider = cs
		}
	}
	return a, nil
}
