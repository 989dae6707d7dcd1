package trace_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// A tool's parts cross a Recorder inside a stack of wrappers, and its row
// records each part's kind, media type, size and SHA-256, never the bytes.
func TestRecordPartsDigestsNotBytes(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		img := []byte("\x89PNG secret pixels")
		fake := llmtoolkittest.NewFake(nil)
		fake.Add(llmtoolkit.MustTool("screenshot", "Takes one.", nil), func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
			llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", img), llmtoolkit.TextPart("secret caption"))
			return "took it", nil
		})
		rec := trace.Record(fake, db)
		defer func() { require.NoError(t, rec.Close()) }()
		_, sess := llmtoolkit.PrepareSession(llmtoolkit.Filter(llmtoolkit.Compose(rec), func(llmtoolkit.Tool) bool { return true }), []string{"screenshot"}, nil)

		res := llmtoolkit.Execute(convCtx(t, 1), sess, llmtoolkit.Call{ID: "c1", Name: "screenshot"})
		require.False(t, res.IsError, res.Content)
		require.Len(t, res.Parts, 2, "the parts cross the Recorder and the wrappers")
		assert.Equal(t, img, res.Parts[0].Data)

		got, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		require.Len(t, got, 1)
		sum := sha256.Sum256(img)
		textSum := sha256.Sum256([]byte("secret caption"))
		assert.Equal(t, trace.JSON{"content": "took it", "parts": []any{
			map[string]any{"kind": "image", "media_type": "image/png", "bytes": float64(len(img)), "sha256": hex.EncodeToString(sum[:])},
			map[string]any{"kind": "text", "bytes": float64(len("secret caption")), "sha256": hex.EncodeToString(textSum[:])},
		}}, got[0].Result)
		row, err := json.Marshal(got[0])
		require.NoError(t, err)
		assert.NotContains(t, string(row), base64.StdEncoding.EncodeToString(img))
		assert.NotContains(t, string(row), "secret")
	})
}
