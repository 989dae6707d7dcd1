package mcp

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

// TestClientResolveDescribesDroppedParts: Client.Resolve called directly
// (not through Execute) on a result of text plus an image returned the
// text only: the image was dropped without the bracket line its doc
// promises. Where nothing keeps the parts, each is now described in the
// text; through Execute or with a part sink they are parts, not lines.
func TestClientResolveDescribesDroppedParts(t *testing.T) {
	t.Parallel()
	c := ourClient(t, partsFixture())
	tests := []struct {
		name      string
		ctx       func(*[]llmtoolkit.Part) context.Context
		wantText  string
		wantParts int
	}{
		{"Resolve alone", func(*[]llmtoolkit.Part) context.Context { return testContext(t) },
			"here it is\n[image: image/png, 15 bytes]\na caption\n[audio: audio/wav, 15 bytes]\n[resource: llmtoolkit:part/4/report%20final.pdf, application/pdf, 13 bytes]", 0},
		{"Resolve with a part sink", func(got *[]llmtoolkit.Part) context.Context {
			return llmtoolkit.WithListeners(testContext(t), llmtoolkit.Listeners{Parts: func(p []llmtoolkit.Part) { *got = append(*got, p...) }})
		}, "here it is\na caption", 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []llmtoolkit.Part
			out, err := c.Resolve(tc.ctx(&got), llmtoolkit.Call{Name: "look"})
			require.NoError(t, err)
			assert.Equal(t, tc.wantText, out)
			assert.Len(t, got, tc.wantParts)
		})
	}
	res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{Name: "look"})
	assert.Equal(t, "here it is\na caption", res.Content)
	assert.Len(t, res.Parts, 3)
}
