package otelkit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	lt "github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/otelkit"
)

// A tool's parts cross the instrumented resolver, and its span records one
// event per part (kind, media type, size, SHA-256), never the bytes, even
// with content capture on.
func TestSpanRecordsPartDigests(t *testing.T) {
	tel := newTelemetry(t)
	img := []byte("\x89PNG secret pixels")
	fake := lt.NewFake(nil)
	fake.Add(llmtoolkit.MustTool("shot", "Takes one.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", img))
		return "took it", nil
	})
	tools := otelkit.Instrument(fake, tel.opts(otelkit.WithCaptureContent())...)
	res := llmtoolkit.Execute(testContext(t), llmtoolkit.Compose(tools), llmtoolkit.Call{ID: "1", Name: "shot"})
	require.False(t, res.IsError, res.Content)
	require.Len(t, res.Parts, 1)
	assert.Equal(t, img, res.Parts[0].Data)

	span := tel.span(t, "execute_tool shot")
	require.Len(t, span.Events, 1)
	ev := span.Events[0]
	assert.Equal(t, "llmtoolkit.tool.part", ev.Name)
	got := map[string]any{}
	for _, kv := range ev.Attributes {
		got[string(kv.Key)] = kv.Value.AsInterface()
	}
	sum := sha256.Sum256(img)
	assert.Equal(t, map[string]any{
		"llmtoolkit.part.kind": "image", "llmtoolkit.part.media_type": "image/png",
		"llmtoolkit.part.bytes": int64(len(img)), "llmtoolkit.part.sha256": hex.EncodeToString(sum[:]),
	}, got)
	assert.NotContains(t, fmt.Sprint(span), "secret pixels")
}
