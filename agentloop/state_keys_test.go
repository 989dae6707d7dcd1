package agentloop_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/provider"
)

// TestStateKeysAreProviders checks that the keys the estimate looks up
// first are the ones package provider writes: were one renamed, the
// estimate would stay right (it ranges over the rest) but slower.
func TestStateKeysAreProviders(t *testing.T) {
	assert.ElementsMatch(t, []string{provider.StateAnthropic, provider.StateGemini, provider.StateOpenAIResponses}, agentloop.StateKeys())
}
