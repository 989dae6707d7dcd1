//go:build peers

package conformance_test

// The tool search shapes are checked against the SDKs' own types: the
// request side through the corpus (TestProviderRequestsDecodeInSDKs, fed
// by package provider's TestToolSearch* tests), the tool definitions and
// the responses here.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	"github.com/openai/openai-go/v3/responses"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

func searchTools(t *testing.T) []llmtoolkit.Tool {
	t.Helper()
	read := llmtoolkit.MustTool("read_file", "Reads a file.", map[string]any{"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}})
	post := llmtoolkit.MustTool("slack_post_message", "Posts to Slack.", map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}})
	post.Deferred = true
	return []llmtoolkit.Tool{read, post}
}

func providerTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(coreRoot(t), "provider", "testdata", name))
	require.NoError(t, err)
	return data
}

// TestAnthropicToolSearchInSDK: each search variant decodes as the SDK's
// tool search type, the deferred tool as a tool with defer_loading, and
// nothing is lost; a response with a search decodes into the SDK's
// server_tool_use and tool_search_tool_result blocks, and our readers read
// the references and the call the SDK reads.
func TestAnthropicToolSearchInSDK(t *testing.T) {
	for _, search := range []provider.AnthropicToolSearch{provider.AnthropicToolSearchRegex, provider.AnthropicToolSearchBM25} {
		body := mustJSON(t, provider.AnthropicToolsWithSearch(searchTools(t), search))
		tools := sdkRoundTrip[[]anthropic.ToolUnionParam](t, "Anthropic tools", body)
		require.Len(t, tools, 3)
		if search == provider.AnthropicToolSearchBM25 {
			require.NotNil(t, tools[0].OfToolSearchToolBm25_20251119)
		} else {
			require.NotNil(t, tools[0].OfToolSearchToolRegex20251119)
		}
		require.NotNil(t, tools[1].OfTool)
		assert.False(t, tools[1].OfTool.DeferLoading.Valid())
		require.NotNil(t, tools[2].OfTool)
		assert.True(t, tools[2].OfTool.DeferLoading.Value)
	}

	fixture := providerTestdata(t, "anthropic_response_tool_search.json")
	var msg anthropic.Message
	require.NoError(t, json.Unmarshal(fixture, &msg))
	require.Len(t, msg.Content, 4)
	assert.Equal(t, "tool_search_tool_bm25", string(msg.Content[1].AsServerToolUse().Name))
	result := msg.Content[2].AsToolSearchToolResult()
	assert.Equal(t, msg.Content[1].AsServerToolUse().ID, result.ToolUseID)
	refs := result.Content.AsResponseToolSearchToolSearchResultBlock().ToolReferences
	require.Len(t, refs, 1)
	assert.Equal(t, "slack_post_message", refs[0].ToolName)

	names, err := provider.AnthropicToolReferences(fixture)
	require.NoError(t, err)
	assert.Equal(t, []string{refs[0].ToolName}, names, "our reader reads what the SDK reads")
	resp, err := provider.AnthropicResponse(fixture)
	require.NoError(t, err)
	require.Len(t, resp.ToolCalls, 1)
	use := msg.Content[3].AsToolUse()
	assert.Equal(t, use.Name, resp.ToolCalls[0].Name)
	assert.Equal(t, use.ID, resp.ToolCalls[0].ID)
}

// TestOpenAIResponsesToolSearchInSDK: the tools decode as the SDK's
// function (with defer_loading) and tool_search types, nothing lost; a
// response with a hosted search decodes into the SDK's tool_search_call
// and tool_search_output items, and our readers read the loaded names and
// the call the SDK reads.
func TestOpenAIResponsesToolSearchInSDK(t *testing.T) {
	body := mustJSON(t, provider.OpenAIResponsesToolsWithSearch(searchTools(t)))
	tools := sdkRoundTrip[[]responses.ToolUnionParam](t, "OpenAI Responses tools", body)
	require.Len(t, tools, 3)
	require.NotNil(t, tools[0].OfFunction)
	assert.False(t, tools[0].OfFunction.DeferLoading.Valid())
	require.NotNil(t, tools[1].OfFunction)
	assert.True(t, tools[1].OfFunction.DeferLoading.Value)
	require.NotNil(t, tools[2].OfToolSearch)

	fixture := providerTestdata(t, "openai_responses_tool_search.json")
	var resp responses.Response
	require.NoError(t, json.Unmarshal(fixture, &resp))
	require.Len(t, resp.Output, 3)
	call := resp.Output[0].AsToolSearchCall()
	out := resp.Output[1].AsToolSearchOutput()
	assert.Equal(t, call.CallID, out.CallID)
	assert.Equal(t, responses.ResponseToolSearchCallExecutionServer, call.Execution)
	require.Len(t, out.Tools, 1)
	assert.Equal(t, "slack_post_message", out.Tools[0].Name)
	assert.True(t, out.Tools[0].DeferLoading)

	names, err := provider.OpenAIResponsesToolReferences(fixture)
	require.NoError(t, err)
	assert.Equal(t, []string{out.Tools[0].Name}, names, "our reader reads what the SDK reads")
	parsed, err := provider.OpenAIResponsesResponse(fixture)
	require.NoError(t, err)
	require.Len(t, parsed.ToolCalls, 1)
	fc := resp.Output[2].AsFunctionCall()
	assert.Equal(t, fc.Name, parsed.ToolCalls[0].Name)
	assert.Equal(t, fc.CallID, parsed.ToolCalls[0].ID)
}
