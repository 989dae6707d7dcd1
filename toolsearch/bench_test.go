package toolsearch_test

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/provider"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// hostCatalog is the catalog as a host offers it: the code tools at once,
// every MCP and look-alike tool deferred.
func hostCatalog(t testing.TB) *lt.Fake {
	t.Helper()
	fake := &lt.Fake{}
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	for i, c := range loadCatalog(t) {
		tool, err := llmtoolkit.NewTool(c.Name, c.Description, c.Parameters)
		require.NoError(t, err)
		tool.Deferred = c.Source != "codetools"
		_ = i
		fake.Add(tool, ok)
	}
	return fake
}

// definitionBytes is the size of the tools' definitions in each
// provider's request format.
func definitionBytes(t testing.TB, tools []llmtoolkit.Tool) map[string]int {
	t.Helper()
	out := map[string]int{}
	for name, v := range map[string]any{
		"openai-chat":      provider.OpenAITools(tools),
		"openai-responses": provider.OpenAIResponsesTools(tools),
		"anthropic":        provider.AnthropicTools(tools),
		"gemini":           provider.GeminiTools(tools),
	} {
		data, err := json.Marshal(v)
		require.NoError(t, err)
		out[name] = len(data)
	}
	return out
}

// TestDefinitionBytesPerTurn: the bytes of tool definitions sent on each
// turn, all tools against the deferred catalog behind a tool search, at
// the first turn and after a search found five tools (offer mode) or in
// any turn (proxy mode).
func TestDefinitionBytesPerTurn(t *testing.T) {
	fake := hostCatalog(t)
	all := definitionBytes(t, fake.Tools())

	offer := toolsearch.New(fake)
	first := definitionBytes(t, offer.Tools())
	res := llmtoolkit.Execute(t.Context(), offer, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "create an issue in Jira", "limit": 5}})
	require.False(t, res.IsError, res.Content)
	require.Len(t, offer.Found(), 5)
	afterFive := definitionBytes(t, offer.Tools())
	proxy := definitionBytes(t, toolsearch.New(fake, toolsearch.WithProxy()).Tools())

	for _, format := range []string{"openai-chat", "openai-responses", "anthropic", "gemini"} {
		t.Logf("%-16s all %d tools: %7d B; deferred: first turn %6d B, after 5 found %6d B, proxy %6d B",
			format, len(fake.Tools()), all[format], first[format], afterFive[format], proxy[format])
		assert.Less(t, first[format]*5, all[format], format)
		assert.Less(t, afterFive[format]*4, all[format], format)
		assert.Less(t, proxy[format]*5, all[format], format)
	}
}

// catalogOf returns n tools: the fixture catalog, repeated with numbered
// names past its size.
func catalogOf(b testing.TB, n int) []llmtoolkit.Tool {
	base := catalogTools(b)
	out := make([]llmtoolkit.Tool, 0, n)
	for i := 0; len(out) < n; i++ {
		src := base[i%len(base)]
		if i >= len(base) {
			src.Name = fmt.Sprintf("%s_%d", src.Name, i/len(base))
			if len(src.Name) > 64 {
				src.Name = src.Name[len(src.Name)-64:]
			}
		}
		out = append(out, src)
	}
	return out
}

// BenchmarkSearch: one search over 400 and 10,000 tools, in each mode
// (Hybrid with the fake embedder, the tools' vectors already made: the
// query's embedding and the fusion).
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{400, 10000} {
		ix := toolsearch.NewIndexWith(catalogOf(b, n), toolsearch.WithEmbeddings(newFakeEmbedder(), nil))
		for _, c := range []struct {
			mode  toolsearch.Mode
			query string
		}{
			{toolsearch.BM25, "post a message to the deploys channel in Slack"},
			{toolsearch.Regex, "slack.*(post|message)"},
			{toolsearch.Hybrid, "post a message to the deploys channel in Slack"},
		} {
			if _, err := ix.Search(context.Background(), c.query, c.mode, 5); err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("%s/%d", c.mode, n), func(b *testing.B) {
				for b.Loop() {
					if _, err := ix.Search(context.Background(), c.query, c.mode, 5); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkNewIndex: indexing 400 and 10,000 tools; retained-MiB is the
// heap the index holds once built (after a collection).
func BenchmarkNewIndex(b *testing.B) {
	for _, n := range []int{400, 10000} {
		tools := catalogOf(b, n)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			var ix *toolsearch.Index
			for b.Loop() {
				ix = toolsearch.NewIndex(tools)
			}
			b.StopTimer()
			runtime.KeepAlive(ix)
			ix = nil // the index built in the loop is let go before the heap is read
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			ix = toolsearch.NewIndex(tools)
			runtime.GC()
			runtime.ReadMemStats(&after)
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "retained-MiB")
			runtime.KeepAlive(ix)
		})
	}
}

// BenchmarkResolverSearch: one tool_search call through a Resolver over
// 400 and 10,000 deferred tools, its index built (the list read, checked
// for changes, searched, the answer written).
func BenchmarkResolverSearch(b *testing.B) {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return "", nil }
	for _, n := range []int{400, 10000} {
		fake := &lt.Fake{}
		for _, tool := range catalogOf(b, n) {
			fake.Add(tool, ok)
		}
		s := toolsearch.New(fake)
		call := llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "post a message to the deploys channel in Slack"}}
		llmtoolkit.Execute(context.Background(), s, call)
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			for b.Loop() {
				if res := llmtoolkit.Execute(context.Background(), s, call); res.IsError {
					b.Fatal(res.Content)
				}
			}
		})
	}
}
