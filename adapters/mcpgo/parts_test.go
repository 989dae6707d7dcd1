package mcpgo_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/adapters/mcpgo"
)

// Parts cross mcp-go both ways: served as image, audio and blob contents,
// read back by the Resolver as parts.
func TestPartsRoundTripThroughMCPGo(t *testing.T) {
	sent := []llmtoolkit.Part{
		llmtoolkit.ImagePart("image/png", []byte("\x89PNG fake")),
		llmtoolkit.FilePart("clip.wav", "audio/wav", []byte("RIFF fake")),
		llmtoolkit.FilePart("my report.pdf", "application/pdf", []byte("%PDF-1.7 fake")),
	}
	f := &funcs{
		tools: []llmtoolkit.Tool{llmtoolkit.MustTool("look", "Looks.", nil)},
		run: map[string]func(ctx context.Context, args map[string]any) (string, error){
			"look": func(ctx context.Context, _ map[string]any) (string, error) {
				llmtoolkit.Attach(ctx, sent...)
				return "here", nil
			},
		},
	}
	_, _, c := serve(t, f)
	raw := callTool(t, c, "look", map[string]any{})
	require.Len(t, raw.Content, 4, "text, image, audio, blob")

	r, err := mcpgo.NewResolver(context.Background(), c)
	require.NoError(t, err)
	res := llmtoolkit.Execute(context.Background(), r, llmtoolkit.Call{ID: "1", Name: "look"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "here", res.Content)
	require.Len(t, res.Parts, 3)
	assert.Equal(t, sent[0], res.Parts[0])
	assert.Equal(t, llmtoolkit.FilePart("", "audio/wav", []byte("RIFF fake")), res.Parts[1])
	assert.Equal(t, sent[2], res.Parts[2])
}
