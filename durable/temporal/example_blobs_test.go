package temporal_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/durable/temporal"
)

// A worker whose tools return screenshots keeps their bytes out of the
// run's Temporal payloads: parts above Activities.InlinePartBytes go to a
// folder every worker shares, and the history holds references, which
// the model activity (and ResolveParts, for the host) reads back.
func ExampleDirBlobs() {
	dir, _ := os.MkdirTemp("", "blobs")
	defer os.RemoveAll(dir)
	blobs := temporal.DirBlobs(dir)
	send := func(context.Context, []agentloop.Message, []llmtoolkit.Tool) (agentloop.Response, error) {
		return agentloop.Response{Content: "done"}, nil
	}
	_ = &temporal.Activities{Send: send, Blobs: blobs} // temporal.Register(w, acts)

	// What RunOutput.History holds for a tool's image, and the host reading it.
	png := []byte("\x89PNG...")
	sum := sha256.Sum256(png) // the key is the content's address
	key := "sha256-" + hex.EncodeToString(sum[:])
	_ = blobs.Put(context.Background(), key, png)
	history := []agentloop.Message{{Role: agentloop.RoleTool, ToolCallID: "c1", ToolName: "screenshot", Content: "screen.png",
		Parts: []llmtoolkit.Part{llmtoolkit.ImageURLPart("image/png", temporal.BlobScheme+key)}}}
	resolved, err := temporal.ResolveParts(context.Background(), blobs, history)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resolved[0].Parts[0])
	// Output: image (image/png, 7 bytes)
}
