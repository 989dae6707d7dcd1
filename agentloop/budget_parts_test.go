package agentloop_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// TestEstimateCountsPartsAsProvidersDo: an image counts as the tokens its
// pixels cost, whatever its bytes; a document's bytes count as text.
func TestEstimateCountsPartsAsProvidersDo(t *testing.T) {
	text := agentloop.Message{Role: agentloop.RoleTool, Content: "a.png: image/png"}
	base := agentloop.EstimateTokens([]agentloop.Message{text})

	withImage := text
	withImage.Parts = []llmtoolkit.Part{llmtoolkit.ImagePart("image/png", make([]byte, 5<<20))}
	assert.Equal(t, base+agentloop.ImageTokens, agentloop.EstimateTokens([]agentloop.Message{withImage}),
		"a 5 MiB image is about a thousand tokens, not millions")

	withDoc := text
	withDoc.Parts = []llmtoolkit.Part{llmtoolkit.FilePart("a.pdf", "application/pdf", make([]byte, 30000))}
	assert.Greater(t, agentloop.EstimateTokens([]agentloop.Message{withDoc}), base+9000, "a document's bytes count")
}
