package provider

import (
	"encoding/json"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

// AnthropicToolSearch names one of the Messages API's tool search tools,
// by its versioned type.
type AnthropicToolSearch string

// The Messages API's tool search tools: the model writes a regular
// expression (Python's re syntax) or a natural-language query (BM25).
const (
	AnthropicToolSearchRegex AnthropicToolSearch = "tool_search_tool_regex_20251119"
	AnthropicToolSearchBM25  AnthropicToolSearch = "tool_search_tool_bm25_20251119"
)

// name is the tool's name in requests and in server_tool_use blocks.
func (s AnthropicToolSearch) name() string {
	if s == AnthropicToolSearchBM25 {
		return "tool_search_tool_bm25"
	}
	return "tool_search_tool_regex"
}

// AnthropicToolsWithSearch converts tools to the Messages "tools" array
// for the API's own tool search: the search tool first ({"type": search,
// "name": ...}; an unknown search is the regex one), then every tool, the
// deferred ones ([llmtoolkit.Tool.Deferred]) with "defer_loading": true.
// The model sees the tools not deferred and the search; the API loads a
// deferred definition when the search returns a reference to it (read
// them with [AnthropicToolReferences]). At least one tool must not be
// deferred, or the API refuses the request.
func AnthropicToolsWithSearch(tools []llmtoolkit.Tool, search AnthropicToolSearch) []AnthropicTool {
	if search != AnthropicToolSearchBM25 {
		search = AnthropicToolSearchRegex
	}
	out := make([]AnthropicTool, 0, len(tools)+1)
	out = append(out, AnthropicTool{Type: string(search), Name: search.name()})
	for i, t := range AnthropicTools(tools) {
		t.DeferLoading = tools[i].Deferred
		out = append(out, t)
	}
	return out
}

// AnthropicToolReferences reads the names of the tools the API's tool
// search loaded in an assistant turn: the tool_reference blocks of its
// tool_search_tool_result blocks, in order, each name once. It takes the
// whole Messages response, the message or its content array, as
// [AnthropicToolCalls] does. A search that failed
// (tool_search_tool_result_error) loads nothing.
func AnthropicToolReferences(assistantMessage json.RawMessage) ([]string, error) {
	content := assistantMessage
	if !isArray(content) {
		var msg struct {
			Content json.RawMessage `json:"content"`
		}
		if err := decode("Anthropic", content, &msg); err != nil {
			return nil, err
		}
		if !isArray(msg.Content) {
			return nil, nil
		}
		content = msg.Content
	}
	var blocks []struct {
		Type    string `json:"type"`
		Content *struct {
			Type           string `json:"type"`
			ToolReferences []struct {
				ToolName string `json:"tool_name"`
			} `json:"tool_references"`
		} `json:"content"`
	}
	if err := decode("Anthropic", content, &blocks); err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, b := range blocks {
		if b.Type != "tool_search_tool_result" || b.Content == nil || b.Content.Type != "tool_search_tool_search_result" {
			continue
		}
		for _, ref := range b.Content.ToolReferences {
			if ref.ToolName != "" && !seen[ref.ToolName] {
				seen[ref.ToolName] = true
				names = append(names, ref.ToolName)
			}
		}
	}
	return names, nil
}

// OpenAIResponsesToolSearchType is the type of the Responses API's tool
// search tool.
const OpenAIResponsesToolSearchType = "tool_search"

// OpenAIResponsesToolsWithSearch converts tools to the Responses API
// "tools" array for the API's own (hosted) tool search: every function,
// the deferred ones ([llmtoolkit.Tool.Deferred]) with "defer_loading":
// true, then {"type": "tool_search"}. The search's items
// (tool_search_call, tool_search_output) come back in the response's
// output; [OpenAIResponsesResponse] keeps them in the provider state, so
// the history replays them, and [OpenAIResponsesToolReferences] reads
// the names they loaded.
func OpenAIResponsesToolsWithSearch(tools []llmtoolkit.Tool) []OpenAIResponsesTool {
	out := OpenAIResponsesTools(tools)
	for i := range out {
		out[i].DeferLoading = tools[i].Deferred
	}
	return append(out, OpenAIResponsesTool{Type: OpenAIResponsesToolSearchType})
}

// OpenAIResponsesToolReferences reads the names of the functions the
// API's tool search loaded in a response: those of its tool_search_output
// items (a namespace's functions included), in order, each name once. It
// takes the whole response body.
func OpenAIResponsesToolReferences(response json.RawMessage) ([]string, error) {
	var body struct {
		Output []struct {
			Type  string             `json:"type"`
			Tools []openAILoadedTool `json:"tools"`
		} `json:"output"`
	}
	if err := decode("OpenAI Responses", response, &body); err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	var add func(tools []openAILoadedTool, depth int) error
	add = func(tools []openAILoadedTool, depth int) error {
		if depth > 1 {
			return fmt.Errorf("%w: OpenAI Responses: a tool_search_output nests namespaces", ErrInvalidPayload)
		}
		for _, t := range tools {
			switch t.Type {
			case "function":
				if t.Name != "" && !seen[t.Name] {
					seen[t.Name] = true
					names = append(names, t.Name)
				}
			case "namespace":
				if err := add(t.Tools, depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for _, it := range body.Output {
		if it.Type == "tool_search_output" {
			if err := add(it.Tools, 0); err != nil {
				return nil, err
			}
		}
	}
	return names, nil
}

// openAILoadedTool is a tool of a tool_search_output item.
type openAILoadedTool struct {
	Type  string             `json:"type"`
	Name  string             `json:"name"`
	Tools []openAILoadedTool `json:"tools"`
}
