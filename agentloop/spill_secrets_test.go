package agentloop_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// Issue 47, row 7: the files the context policy writes, and the summaries
// it keeps, hold no declared secret (Tool.SensitiveFields), as the trace
// rows and the cleared stubs hold none.

const spillKey = "sk-live-4f9a2c7e11d3"

// echoKeyTool is a tool whose api_key is sensitive and whose long output
// quotes the key it was given.
func echoKeyTool() *lt.Fake {
	f := &lt.Fake{}
	tool := llmtoolkit.MustTool("deploy", "Deploy.", map[string]any{"type": "object", "properties": map[string]any{
		"target": map[string]any{"type": "string"}, "api_key": map[string]any{"type": "string"}}})
	tool.SensitiveFields = []string{"api_key"}
	f.Add(tool, func(_ context.Context, c llmtoolkit.Call) (string, error) {
		var b strings.Builder
		for i := range 400 {
			fmt.Fprintf(&b, "step %d: POST https://deploy.example/api?key=%v ok\n", i, c.Arguments["api_key"])
		}
		return b.String(), nil
	})
	return f
}

func deployCall(k int) llmtoolkit.Call {
	return lt.Call("deploy", map[string]any{"target": fmt.Sprintf("env-%d", k), "api_key": spillKey})
}

// filesUnder returns the content of every file under root, by path.
func filesUnder(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		out[p] = string(data)
		return err
	}))
	return out
}

func TestSpillFilesHoldNoDeclaredSecret(t *testing.T) {
	root := t.TempDir()
	var spilled []string
	_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(3, deployCall), agentloop.Options{
		Resolver: echoKeyTool(), Logger: quiet,
		ContextPolicy: agentloop.ContextPolicy{SpillBytes: 2048, SpillRoot: root, KeepSpillFiles: true},
		OnEvent: func(e agentloop.Event) {
			if e.Kind == agentloop.EventResultSpilled {
				spilled = append(spilled, e.Context.Path)
			}
		},
	})
	require.NoError(t, err)
	require.Len(t, spilled, 2, "each result is spilled")
	files := filesUnder(t, root)
	for _, p := range spilled {
		content, ok := files[filepath.Join(root, p)]
		require.True(t, ok, "the spill file %s is kept", p)
		assert.True(t, strings.Contains(content, "step 399: POST https://deploy.example/api?key="+agentloop.Redacted), "the file %s is not the whole result, scrubbed", p)
	}
	for p, content := range files {
		assert.False(t, strings.Contains(content, spillKey), "the file %s holds the declared secret", p)
	}
	for _, m := range history {
		if m.Role == agentloop.RoleTool {
			assert.False(t, strings.Contains(m.Content, spillKey), "the spilled result's head and tail hold the secret")
		}
	}
}

// The worker's side of a durable run (RunToolCall) scrubs its spill file
// too: it knows the call's own secrets.
func TestSpillFilesOfRunToolCallHoldNoDeclaredSecret(t *testing.T) {
	root := t.TempDir()
	c := deployCall(1)
	c.ID = "c1"
	res := agentloop.RunToolCall(t.Context(), agentloop.Options{Resolver: echoKeyTool(), Logger: quiet,
		ContextPolicy: agentloop.ContextPolicy{SpillBytes: 2048, SpillRoot: root}}, 1, []llmtoolkit.Call{c}, 0)
	require.False(t, res.IsError, res.Content)
	files := filesUnder(t, root)
	require.NotEmpty(t, files)
	spills := 0
	for p, content := range files {
		assert.False(t, strings.Contains(content, spillKey), "the file %s holds the declared secret", p)
		if strings.HasSuffix(p, ".txt") {
			spills++
			assert.True(t, strings.Contains(content, "key="+agentloop.Redacted), "the file %s is not scrubbed", p)
		}
	}
	assert.Equal(t, 1, spills)
	assert.False(t, strings.Contains(res.Content, spillKey), "the result holds the declared secret")
}

// A summary that quotes the key (a model writes what it read) is kept
// scrubbed.
func TestSummaryHoldsNoDeclaredSecret(t *testing.T) {
	summaries := 0
	summarize := func(_ context.Context, span []agentloop.Message) (string, error) {
		summaries++
		return "Deployed with api_key " + spillKey + " to env-1.", nil
	}
	_, history, err := agentloop.Run(t.Context(), prompt(), turnsModel(8, deployCall), agentloop.Options{
		Resolver: echoKeyTool(), Logger: quiet, ContextBudget: 40000,
		ContextPolicy: agentloop.ContextPolicy{Summarize: summarize, CompactAt: 12000, KeepRecent: 4000, KeepToolResults: 100}})
	require.NoError(t, err)
	require.Positive(t, summaries, "the history was compacted")
	found := false
	for _, m := range history {
		if strings.HasPrefix(m.Content, agentloop.SummaryHeader) {
			found = true
			assert.NotContains(t, m.Content, spillKey)
			assert.Contains(t, m.Content, "api_key "+agentloop.Redacted)
		}
	}
	assert.True(t, found, "no summary in the history")
}
