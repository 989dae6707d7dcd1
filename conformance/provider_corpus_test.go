//go:build peers

package conformance_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	data, err := json.Marshal(v)
	require.NoError(t, err)
	return data
}

// coreRoot is the core module's folder: this module's parent.
func coreRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	require.NoError(t, err)
	require.FileExists(t, filepath.Join(root, "go.mod"))
	return root
}

// TestProviderRequestsDecodeInSDKs runs package provider's tests (in the
// core module, which does not require the SDKs) with LLMTOOLKIT_SDK_CORPUS
// set, so that they write every request body they build (and the responses
// their scripted servers send), then decodes each body with the official
// SDK's type of its wire and checks that nothing is lost.
func TestProviderRequestsDecodeInSDKs(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the core's provider tests: not in -short")
	}
	corpus := t.TempDir()
	cmd := exec.Command("go", "test", "-count=1", "./provider")
	cmd.Dir = coreRoot(t)
	cmd.Env = append(os.Environ(), "LLMTOOLKIT_SDK_CORPUS="+corpus)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the core's provider tests failed:\n%s", out)

	checks := map[string]func(*testing.T, []byte){
		"anthropic":        checkAnthropicSDK,
		"gemini":           checkGeminiSDK,
		"openai-responses": checkOpenAIResponsesSDK,
		"openai-chat":      checkOpenAIChatSDK,
		// The responses the scripted runs' servers send, read by the SDKs.
		"openai-chat-completion": checkOpenAIChatCompletionSDK,
		"openai-chat-chunk":      checkOpenAIChatChunkSDK,
		"gemini-response":        checkGeminiResponseSDK,
	}
	entries, err := os.ReadDir(corpus)
	require.NoError(t, err)
	seen := map[string]int{}
	for _, e := range entries {
		wire, rest, ok := strings.Cut(e.Name(), "--")
		require.True(t, ok, "unexpected corpus file %s", e.Name())
		check, ok := checks[wire]
		require.True(t, ok, "corpus file %s names no known wire", e.Name())
		body, err := os.ReadFile(filepath.Join(corpus, e.Name()))
		require.NoError(t, err)
		seen[wire]++
		t.Run(wire+"/"+strings.TrimSuffix(rest, ".json"), func(t *testing.T) { check(t, body) })
	}
	for wire := range checks {
		assert.GreaterOrEqual(t, seen[wire], 3, "the core's tests wrote too few %s requests", wire)
	}
}
