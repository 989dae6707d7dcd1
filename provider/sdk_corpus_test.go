package provider_test

import (
	"os"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

// sdkCorpusVar names a folder that receives every request body these tests
// build. The official SDKs are not this module's dependencies: the
// conformance module (conformance/provider_sdk_test.go) runs these tests
// with the variable set, then decodes each body with the SDK's request type
// and checks that nothing is lost.
const sdkCorpusVar = "LLMTOOLKIT_SDK_CORPUS"

var unsafeInName = regexp.MustCompile(`[^A-Za-z0-9_.-]+`)

// recordForSDK writes body to the corpus folder as <wire>--<test>--*.json,
// when there is one.
func recordForSDK(t *testing.T, wire string, body []byte) {
	t.Helper()
	dir := os.Getenv(sdkCorpusVar)
	if dir == "" {
		return
	}
	f, err := os.CreateTemp(dir, wire+"--"+unsafeInName.ReplaceAllString(t.Name(), "_")+"--*.json")
	require.NoError(t, err)
	_, err = f.Write(body)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func checkAnthropicSDK(t *testing.T, body []byte)       { recordForSDK(t, "anthropic", body) }
func checkGeminiSDK(t *testing.T, body []byte)          { recordForSDK(t, "gemini", body) }
func checkOpenAIResponsesSDK(t *testing.T, body []byte) { recordForSDK(t, "openai-responses", body) }
func checkOpenAIChatSDK(t *testing.T, body []byte)      { recordForSDK(t, "openai-chat", body) }
