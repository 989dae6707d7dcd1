package toolsearch_test

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/toolsearch"
)

// A resolver with one tool offered at once and two deferred: the model
// sees read_file and tool_search, finds the Slack tool, and is offered it
// from then on.
func Example() {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	post := llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", nil)
	issue := llmtoolkit.MustTool("github_create_issue", "Create an issue in a GitHub repository.", nil)
	deferred := (&lt.Fake{}).Add(post, ok).Add(issue, ok)
	code := (&lt.Fake{}).Add(llmtoolkit.MustTool("read_file", "Reads a file.", nil), ok)

	s := toolsearch.New(llmtoolkit.Compose(code, llmtoolkit.Defer(deferred)))
	fmt.Println(names(s.Tools()))
	res := llmtoolkit.Execute(context.Background(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "send a Slack message", "limit": 1}})
	fmt.Print(res.Content)
	fmt.Println(names(s.Tools()))
	// Output:
	// [read_file tool_search]
	// 1 tools found; you can call them from now on:
	// - slack_post_message: Post a message to a Slack channel.
	// [read_file tool_search slack_post_message]
}

// In proxy mode the list never changes: call_tool runs what tool_search
// found, validated against that tool's schema.
func Example_proxy() {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) {
		return fmt.Sprint(c.Name, " ran with ", c.Arguments), nil
	}
	post := llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", map[string]any{
		"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}, "required": []any{"text"}})
	s := toolsearch.New(llmtoolkit.Defer((&lt.Fake{}).Add(post, ok)), toolsearch.WithProxy(), toolsearch.WithMode(toolsearch.Regex))
	ctx := context.Background()
	llmtoolkit.Execute(ctx, s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "slack"}})
	res := llmtoolkit.Execute(ctx, s, llmtoolkit.Call{Name: "call_tool", Arguments: map[string]any{"name": "slack_post_message", "arguments": map[string]any{"text": "hi"}}})
	fmt.Println(res.Content)
	fmt.Println(names(s.Tools()))
	// Output:
	// slack_post_message ran with map[text:hi]
	// [tool_search call_tool]
}

// wordsEmbedder stands for a host's embedding endpoint: it gives "tune"
// and "track" one dimension, as a model that knows they mean the same
// would, and each other word one of its own.
type wordsEmbedder struct{}

func (wordsEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	dims := map[string]int{"tune": 0, "track": 0}
	out := make([][]float32, len(texts))
	for i, text := range texts {
		v := make([]float32, 64)
		for _, w := range strings.Fields(strings.ToLower(strings.Trim(text, ".:"))) {
			w = strings.Trim(w, ".,:()")
			d, ok := dims[w]
			if !ok {
				h := fnv.New32a()
				h.Write([]byte(w))
				d = 1 + int(h.Sum32()%63)
			}
			v[d]++
		}
		out[i] = v
	}
	return out, nil
}

// With an embedder the search is hybrid: the BM25 ranking and the
// ranking by vectors fused, so a need worded unlike any tool's text
// ("tune" for "track") finds the tool.
func ExampleWithEmbedder() {
	ok := func(_ context.Context, c llmtoolkit.Call) (string, error) { return c.Name + " ran", nil }
	deferred := (&lt.Fake{}).
		Add(llmtoolkit.MustTool("spotify_current_track", "Get the track playing now.", nil), ok).
		Add(llmtoolkit.MustTool("slack_post_message", "Post a message to a Slack channel.", nil), ok)
	s := toolsearch.New(llmtoolkit.Defer(deferred), toolsearch.WithEmbedder(wordsEmbedder{}))
	res := llmtoolkit.Execute(context.Background(), s, llmtoolkit.Call{Name: "tool_search", Arguments: map[string]any{"query": "what tune is this", "limit": 1}})
	fmt.Print(res.Content)
	// Output:
	// 1 tools found; you can call them from now on:
	// - spotify_current_track: Get the track playing now.
}
