package mcp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"os/exec"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

var sentParts = []llmtoolkit.Part{
	llmtoolkit.ImagePart("image/png", []byte("\x89PNG fake image")),
	llmtoolkit.TextPart("a caption"),
	llmtoolkit.FilePart("clip.wav", "audio/wav", []byte("RIFF fake audio")),
	llmtoolkit.FilePart("report final.pdf", "application/pdf", []byte("%PDF-1.7 fake")),
}

// photo is 1 MiB of image bytes, the same on every run (a PNG signature,
// then bytes that do not repeat in any short period): larger than any of
// the transports' buffers.
func photo() []byte {
	b := make([]byte, 1<<20)
	copy(b, "\x89PNG\r\n\x1a\n")
	x := uint32(38)
	for i := 8; i < len(b); i++ {
		x = x*1664525 + 1013904223
		b[i] = byte(x >> 24)
	}
	return b
}

// partsFixture is a resolver whose "look" tool answers with text and
// sentParts, whose "photo" tool answers with a text and the photo, and
// whose "huge" tool attaches an image too large for one MCP answer after a
// small one.
func partsFixture() *llmtoolkittest.Fake {
	f := llmtoolkittest.NewFake(nil)
	f.Add(llmtoolkit.MustTool("photo", "Takes a photo.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", photo()))
		return "a photo", nil
	})
	f.Add(llmtoolkit.MustTool("look", "Looks.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, sentParts...)
		return "here it is", nil
	})
	f.Add(llmtoolkit.MustTool("huge", "Too big.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", []byte("small")), llmtoolkit.ImagePart("image/jpeg", bytes.Repeat([]byte{1}, 12<<20)))
		return "two images", nil
	})
	return f
}

// Parts cross MCP both ways: the server sends image, audio and embedded
// resource content; this package's client keeps them as parts, in order.
func TestPartsRoundTripThroughMCP(t *testing.T) {
	t.Parallel()
	c := ourClient(t, partsFixture())
	res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{ID: "1", Name: "look"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "here it is\na caption", res.Content, "text parts come back as text")
	require.Len(t, res.Parts, 3)
	assert.Equal(t, sentParts[0], res.Parts[0])
	assert.Equal(t, llmtoolkit.FilePart("", "audio/wav", []byte("RIFF fake audio")), res.Parts[1], "audio has no name in MCP")
	assert.Equal(t, sentParts[3], res.Parts[2], "an embedded resource keeps its name and bytes")
	assert.NotContains(t, res.Content, "[image:", "no placeholder line")

	res = llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{ID: "2", Name: "huge"})
	require.False(t, res.IsError, res.Content)
	require.Len(t, res.Parts, 1, "a part over the answer's budget is left out")
	assert.Equal(t, []byte("small"), res.Parts[0].Data)
	assert.Contains(t, res.Content, "image (image/jpeg, 12582912 bytes) not sent: one MCP answer carries at most")
}

// The official Go SDK's client reads what the server sends as the MCP
// content types.
func TestPartsReachSDKClient(t *testing.T) {
	t.Parallel()
	cs := sdkClient(t, partsFixture())
	out, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "look", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Len(t, out.Content, 5)
	assert.Equal(t, "here it is", out.Content[0].(*sdk.TextContent).Text)
	img := out.Content[1].(*sdk.ImageContent)
	assert.Equal(t, "image/png", img.MIMEType)
	assert.Equal(t, sentParts[0].Data, img.Data)
	assert.Equal(t, "a caption", out.Content[2].(*sdk.TextContent).Text)
	audio := out.Content[3].(*sdk.AudioContent)
	assert.Equal(t, "audio/wav", audio.MIMEType)
	res := out.Content[4].(*sdk.EmbeddedResource).Resource
	assert.Equal(t, "application/pdf", res.MIMEType)
	assert.Equal(t, sentParts[3].Data, res.Blob)
	assert.True(t, strings.HasPrefix(res.URI, partURIPrefix), res.URI)
}

// partsServerProcess is a command that runs Serve over stdio, in a child
// process (this test binary), for partsFixture.
func partsServerProcess() *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), serverEnv+"=parts")
	cmd.Stderr = os.Stderr
	return cmd
}

// Parts round trip through Serve over stdio, with the server a real child
// process: the official Go SDK's client and Connect read the image back
// byte for byte (1 MiB: larger than every buffer on the way), and the
// audio and the PDF as their MCP content.
func TestPartsOverStdioProcess(t *testing.T) {
	t.Parallel()
	want := sha256.Sum256(photo())
	t.Run("official Go SDK client", func(t *testing.T) {
		t.Parallel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "test-client", Version: "v0"}, nil).
			Connect(testContext(t), &sdk.CommandTransport{Command: partsServerProcess()}, nil)
		require.NoError(t, err)
		defer cs.Close()
		out, err := cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "photo", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.False(t, out.IsError)
		require.Len(t, out.Content, 2)
		assert.Equal(t, "a photo", out.Content[0].(*sdk.TextContent).Text)
		img := out.Content[1].(*sdk.ImageContent)
		assert.Equal(t, "image/png", img.MIMEType)
		assert.Equal(t, want, sha256.Sum256(img.Data), "the image's bytes, byte for byte")

		out, err = cs.CallTool(testContext(t), &sdk.CallToolParams{Name: "look", Arguments: map[string]any{}})
		require.NoError(t, err)
		require.Len(t, out.Content, 5)
		assert.Equal(t, sentParts[0].Data, out.Content[1].(*sdk.ImageContent).Data)
		assert.Equal(t, sentParts[2].Data, out.Content[3].(*sdk.AudioContent).Data)
		assert.Equal(t, sentParts[3].Data, out.Content[4].(*sdk.EmbeddedResource).Resource.Blob)
	})
	t.Run("Connect", func(t *testing.T) {
		t.Parallel()
		cmd := partsServerProcess()
		c, err := Connect(testContext(t), CommandTransport(cmd))
		require.NoError(t, err)
		res := llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{ID: "1", Name: "photo"})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, "a photo", res.Content)
		require.Len(t, res.Parts, 1)
		assert.Equal(t, llmtoolkit.PartImage, res.Parts[0].Kind)
		assert.Equal(t, "image/png", res.Parts[0].MediaType)
		assert.Equal(t, want, sha256.Sum256(res.Parts[0].Data), "the image's bytes, byte for byte")

		res = llmtoolkit.Execute(testContext(t), c, llmtoolkit.Call{ID: "2", Name: "look"})
		require.False(t, res.IsError, res.Content)
		assert.Equal(t, []llmtoolkit.Part{sentParts[0], llmtoolkit.FilePart("", "audio/wav", sentParts[2].Data), sentParts[3]}, res.Parts)
		require.NoError(t, c.Close())
		assert.True(t, cmd.ProcessState.Success(), "the server process exits when its input closes")
	})
}
