package mcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// displayProject builds the same small project in a new folder each time,
// so that a call can run on one copy locally and on another over MCP.
func displayProject(t *testing.T) *codetools.CodeTools {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"a.txt":     "one\ntwo\nthree\n",
		"b.txt":     "alpha\nbeta\ngamma\n",
		"sub/c.txt": "two more\n",
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
	}
	ct, err := codetools.New(dir, codetools.WithAllowPrivateNetworks())
	require.NoError(t, err)
	t.Cleanup(func() { _ = ct.Close() })
	return ct
}

// generic is v as a JSON value decoded without types.
func generic(t *testing.T, v any) any {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	var out any
	require.NoError(t, json.Unmarshal(data, &out))
	return out
}

// TestMetaDisplayMatchesLocalDisplay: for every built-in kind, the Display
// an MCP client reads in _meta has the JSON shape of the Display
// the tool shows locally, and this package's client turns it back into a
// Display that codetools.DecodeDisplay makes the very same typed payload.
func TestMetaDisplayMatchesLocalDisplay(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello page")
	}))
	t.Cleanup(srv.Close)
	tests := []struct {
		kind string
		call llmtoolkit.Call
	}{
		{codetools.DisplayFile, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.txt", "limit": 2}}},
		{codetools.DisplayDiff, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{"path": "a.txt", "oldText": "two", "newText": "TWO"}}},
		{codetools.DisplayDiff, llmtoolkit.Call{Name: "multi_edit", Arguments: map[string]any{"path": "b.txt", "edits": []any{
			map[string]any{"oldText": "alpha", "newText": "A"}, map[string]any{"oldText": "gamma", "newText": "G"}}}}},
		{codetools.DisplayDiff, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "a.txt", "content": "new\n"}}},
		{codetools.DisplayProcess, llmtoolkit.Call{Name: "bash", Arguments: map[string]any{"command": "echo out; exit 3"}}},
		{codetools.DisplayMatches, llmtoolkit.Call{Name: "grep", Arguments: map[string]any{"pattern": "two"}}},
		{codetools.DisplayFiles, llmtoolkit.Call{Name: "glob", Arguments: map[string]any{"pattern": "**/c.txt"}}},
		{codetools.DisplayWebpage, llmtoolkit.Call{Name: "http_get", Arguments: map[string]any{"url": srv.URL}}},
	}
	for _, tt := range tests {
		t.Run(tt.call.Name, func(t *testing.T) {
			ctx := testContext(t)
			local := llmtoolkit.Execute(ctx, displayProject(t), tt.call)
			require.NotNil(t, local.Display, local.Content)
			require.Equal(t, tt.kind, local.Display.Kind)

			// What any MCP client reads.
			remote := displayProject(t)
			res, err := sdkClient(t, remote).CallTool(ctx, &sdk.CallToolParams{Name: tt.call.Name, Arguments: tt.call.Arguments})
			require.NoError(t, err)
			assert.Nil(t, res.StructuredContent, "the Display is not the tool's result")
			assert.Equal(t, local.Content, res.Content[0].(*sdk.TextContent).Text, "the text is the tool's answer")
			want, got := generic(t, local.Display).(map[string]any), generic(t, res.Meta[DisplayMetaKey]).(map[string]any)
			if tt.kind == codetools.DisplayProcess { // the one value that differs between two runs
				got["payload"].(map[string]any)["durationMs"] = want["payload"].(map[string]any)["durationMs"]
			}
			assert.Equal(t, want, got, "_meta's Display has the local Display's JSON shape")

			// What this package's client shows, decoded by the host.
			viaClient := llmtoolkit.Execute(ctx, ourClient(t, displayProject(t)), tt.call)
			require.NotNil(t, viaClient.Display)
			assert.IsType(t, map[string]any{}, viaClient.Display.Payload, "a remote payload arrives as decoded JSON")
			typed, err := codetools.DecodeDisplay(*viaClient.Display)
			require.NoError(t, err)
			if p, ok := typed.Payload.(codetools.ProcessPayload); ok {
				p.DurationMS = local.Display.Payload.(codetools.ProcessPayload).DurationMS
				typed.Payload = p
			}
			assert.Equal(t, *local.Display, typed)
		})
	}
}

// TestTypedDisplayCutToFit: a typed payload too large for one MCP answer
// keeps its keys; only its longest strings are cut.
func TestTypedDisplayCutToFit(t *testing.T) {
	t.Parallel()
	big := strings.Repeat("+a line of the diff\n", 300_000) // 6 MiB
	d := llmtoolkit.Display{Kind: codetools.DisplayDiff, Payload: codetools.DiffPayload{
		Path: "f.txt", Diff: big, Added: 300_000, FirstChangedLine: 1, Replacements: 1,
	}}
	raw, cut, err := displayJSON(d, maxDisplayBytes)
	require.NoError(t, err)
	assert.True(t, cut)
	assert.LessOrEqual(t, len(raw), maxDisplayBytes)
	var back llmtoolkit.Display
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.ElementsMatch(t, []string{"path", "diff", "truncated", "added", "removed", "countsBounded", "firstChangedLine", "replacements", "diagnostics"},
		slices.Collect(maps.Keys(back.Payload.(map[string]any))))
	typed, err := codetools.DecodeDisplay(back)
	require.NoError(t, err)
	p := typed.Payload.(codetools.DiffPayload)
	assert.Equal(t, 300_000, p.Added)
	assert.Equal(t, 1, p.Replacements)
	assert.True(t, strings.HasSuffix(p.Diff, truncatedMark))
}
