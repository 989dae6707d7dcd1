package temporal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/converter"
	sdktemporal "go.temporal.io/sdk/temporal"
	"google.golang.org/protobuf/proto"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
	"github.com/llmtoolkit/llmtoolkit/llmtoolkittest"
)

// sizingConverter is the SDK's default data converter, noting the size of
// the largest payload it writes: what the worker and the workflow would
// send the server, whose limit applies to each.
type sizingConverter struct {
	converter.DataConverter
	mu      sync.Mutex
	largest int
}

func newSizingConverter() *sizingConverter {
	return &sizingConverter{DataConverter: converter.GetDefaultDataConverter()}
}

func (c *sizingConverter) note(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.largest = max(c.largest, n)
}

func (c *sizingConverter) ToPayload(v any) (*commonpb.Payload, error) {
	p, err := c.DataConverter.ToPayload(v)
	if err == nil {
		c.note(proto.Size(p))
	}
	return p, err
}

func (c *sizingConverter) ToPayloads(v ...any) (*commonpb.Payloads, error) {
	p, err := c.DataConverter.ToPayloads(v...)
	if err == nil {
		c.note(proto.Size(p))
	}
	return p, err
}

func (c *sizingConverter) max() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.largest
}

// pictures is a model that asks the tool "screenshot" for a picture on
// each of its first turns, then answers; it keeps the bytes of each image
// part it was sent in the latest tool message, and its text.
type pictures struct {
	turns int
	mu    sync.Mutex
	seen  [][]byte
	texts []string
}

func (m *pictures) send(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
	k := 0
	for _, msg := range msgs {
		if msg.Role == agentloop.RoleAssistant {
			k++
		}
	}
	if last := msgs[len(msgs)-1]; last.Role == agentloop.RoleTool {
		m.mu.Lock()
		m.texts = append(m.texts, last.Content)
		for _, p := range last.Parts {
			if p.URL != "" {
				return agentloop.Response{}, fmt.Errorf("the model was sent a part by URL: %s", p.URL)
			}
			m.seen = append(m.seen, p.Data)
		}
		m.mu.Unlock()
	}
	if k >= m.turns {
		return agentloop.Response{Content: "done"}, nil
	}
	return agentloop.Response{ToolCalls: []llmtoolkit.Call{{ID: fmt.Sprintf("c%d", k+1), Name: "screenshot", Arguments: map[string]any{}}}}, nil
}

// screenshot is a tool that attaches an image of size bytes (different
// bytes on each call) to its answer.
func screenshot(size int) (*llmtoolkittest.Fake, func(i int) []byte) {
	img := func(i int) []byte {
		b := bytes.Repeat([]byte{byte(i)}, size)
		copy(b, "\x89PNG\r\n\x1a\n")
		return b
	}
	var mu sync.Mutex
	n := 0
	fake := llmtoolkittest.NewFake(nil).Handle("screenshot", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", img(i)))
		return fmt.Sprintf("screen.png: image/png, %d bytes", size), nil
	})
	return fake, img
}

// TestBigImageIsKeptOutOfThePayloads (issue 38): a tool answers with a 5
// MiB image (the run's MaxTurnResultBytes raised to 8 MiB to let it
// through), or a 3 MiB one (the defaults), more than Temporal takes in
// one payload (2 MiB by default; base64 adds a third). With
// Activities.Blobs, the image goes to the store: no payload of the run
// passes the limit, the history holds a reference, and the model reads
// the whole image. Without a store, the image is left out, whole, and the
// model reads a note naming the limit and the options. Below the limit, a
// part travels in the payloads as before. (Before: the tool result's
// payload was 7 MB, or 4 MB, which the server refuses.)
func TestBigImageIsKeptOutOfThePayloads(t *testing.T) {
	const big = 5 << 20
	t.Run("blob store", func(t *testing.T) {
		fake, img := screenshot(big)
		model := &pictures{turns: 1}
		dir := t.TempDir()
		env := newEnv(t, &Activities{Send: model.send, Options: agentloop.Options{Resolver: fake}, Blobs: DirBlobs(dir)})
		conv := newSizingConverter()
		env.SetDataConverter(conv)
		env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("look at the screen")}, MaxTurnResultBytes: 8 << 20})
		out := runOutput(t, env)
		require.NoError(t, out.Error())
		assert.Less(t, conv.max(), 64<<10, "every payload is small: the image is not in any")
		require.Len(t, model.seen, 1)
		assert.True(t, bytes.Equal(img(1), model.seen[0]), "the model reads the whole image (%d bytes)", len(model.seen[0]))

		tool := out.History[2]
		require.Len(t, tool.Parts, 1)
		assert.Empty(t, tool.Parts[0].Data)
		assert.True(t, strings.HasPrefix(tool.Parts[0].URL, BlobScheme+"sha256-"), tool.Parts[0].URL)
		assert.Equal(t, "image/png", tool.Parts[0].MediaType)
		resolved, err := ResolveParts(context.Background(), DirBlobs(dir), out.History)
		require.NoError(t, err)
		assert.True(t, bytes.Equal(img(1), resolved[2].Parts[0].Data), "ResolveParts gives the host the bytes back")
		assert.NotEmpty(t, out.History[2].Parts[0].URL, "ResolveParts leaves its input as it was")
	})
	t.Run("no store", func(t *testing.T) {
		fake, _ := screenshot(3 << 20)
		model := &pictures{turns: 1}
		env := newEnv(t, &Activities{Send: model.send, Options: agentloop.Options{Resolver: fake}})
		conv := newSizingConverter()
		env.SetDataConverter(conv)
		env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("look at the screen")}})
		out := runOutput(t, env)
		require.NoError(t, out.Error())
		assert.LessOrEqual(t, conv.max(), DefaultMaxPayloadBytes)
		assert.Zero(t, len(model.seen), "the image is left out")
		require.Len(t, model.texts, 1)
		assert.Contains(t, model.texts[0], "screen.png: image/png, 3145728 bytes")
		assert.Contains(t, model.texts[0], "image (image/png, 3145728 bytes) left out")
		assert.Contains(t, model.texts[0], "at most 2097152 bytes (RunInput.MaxPayloadBytes)")
		assert.Contains(t, model.texts[0], "Activities.Blobs")
	})
	t.Run("below the limit", func(t *testing.T) {
		fake, img := screenshot(40 << 10)
		model := &pictures{turns: 1}
		env := newEnv(t, &Activities{Send: model.send, Options: agentloop.Options{Resolver: fake}, Blobs: DirBlobs(t.TempDir())})
		env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("look at the screen")}})
		out := runOutput(t, env)
		require.NoError(t, out.Error())
		require.Len(t, model.seen, 1)
		assert.True(t, bytes.Equal(img(1), model.seen[0]))
		assert.True(t, bytes.Equal(img(1), out.History[2].Parts[0].Data), "a small part stays in the history, as before")
	})
}

// TestHistoryOutgrowingAPayloadEndsTheRun: each result's image fits a
// payload, but the history that holds them all does not: the run ends
// before the model call that would send it, with an application error of
// type PayloadTooLargeType naming the size, the limit and the options
// (before: the workflow task failed on the server's refusal, again and
// again).
func TestHistoryOutgrowingAPayloadEndsTheRun(t *testing.T) {
	fake, _ := screenshot(100 << 10)
	model := &pictures{turns: 5}
	env := newEnv(t, &Activities{Send: model.send, Options: agentloop.Options{Resolver: fake}})
	conv := newSizingConverter()
	env.SetDataConverter(conv)
	const limit = 250 << 10
	env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("look at the screen")}, MaxPayloadBytes: limit})
	require.True(t, env.IsWorkflowCompleted())
	err := env.GetWorkflowError()
	require.Error(t, err)
	var appErr *sdktemporal.ApplicationError
	require.ErrorAs(t, err, &appErr)
	assert.Equal(t, PayloadTooLargeType, appErr.Type())
	assert.True(t, appErr.NonRetryable())
	assert.Contains(t, err.Error(), ErrPayloadTooLarge.Error())
	assert.Contains(t, err.Error(), "RunInput.MaxPayloadBytes is 256000")
	assert.Contains(t, err.Error(), "Activities.Blobs")
	assert.Len(t, model.seen, 1, "the second image made the history too large before the third model call")
	assert.LessOrEqual(t, conv.max(), limit, "no payload passed the limit")
}

// TestDirBlobs: a blob goes in and comes back; a key that is not a
// content address (a path, another case) is refused; a missing blob is
// ErrBlobNotFound; a blob whose file changed is refused.
func TestDirBlobs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := DirBlobs(dir + "/blobs")
	data := []byte("an image")
	key := blobKey(data)
	require.NoError(t, s.Put(ctx, key, data))
	require.NoError(t, s.Put(ctx, key, data), "a replayed Put writes the same blob")
	got, err := s.Get(ctx, key)
	require.NoError(t, err)
	assert.Equal(t, data, got)

	for _, bad := range []string{"../x", "sha256-" + strings.Repeat("A", 64), "sha256-" + strings.Repeat("a", 63), "sha256-../../" + strings.Repeat("a", 58), ""} {
		assert.Error(t, s.Put(ctx, bad, data), bad)
		_, err := s.Get(ctx, bad)
		assert.Error(t, err, bad)
	}
	_, err = s.Get(ctx, blobKey([]byte("other")))
	assert.True(t, errors.Is(err, ErrBlobNotFound), "%v", err)

	require.NoError(t, s.Put(ctx, blobKey([]byte("x")), []byte("x")))
	require.NoError(t, os.WriteFile(dir+"/blobs/"+blobKey([]byte("x")), []byte("y"), 0o600))
	_, err = s.Get(ctx, blobKey([]byte("x")))
	assert.ErrorContains(t, err, "does not hold the bytes its key names")

	_, err = ResolveParts(ctx, nil, []agentloop.Message{{Role: agentloop.RoleTool, Parts: []llmtoolkit.Part{{Kind: llmtoolkit.PartImage, URL: BlobScheme + key}}}})
	assert.ErrorContains(t, err, "no BlobStore is set (Activities.Blobs)")
}

// TestToolCannotForgeABlobReference: a part a tool returns with a blob
// reference for URL (an MCP server's link) is left out, so the model
// activity never reads a blob the tool named; the model reads a note.
func TestToolCannotForgeABlobReference(t *testing.T) {
	dir := t.TempDir()
	secret := []byte("another run's screenshot")
	require.NoError(t, DirBlobs(dir).Put(context.Background(), blobKey(secret), secret))
	fake := llmtoolkittest.NewFake(nil).Handle("screenshot", func(ctx context.Context, _ llmtoolkit.Call) (string, error) {
		llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", []byte("own")),
			llmtoolkit.ImageURLPart("image/png", BlobScheme+blobKey(secret)))
		return "two pictures", nil
	})
	model := &pictures{turns: 1}
	env := newEnv(t, &Activities{Send: model.send, Options: agentloop.Options{Resolver: fake}, Blobs: DirBlobs(dir)})
	env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{agentloop.UserMessage("look")}})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.Equal(t, [][]byte{[]byte("own")}, model.seen, "the tool's own image only")
	require.Len(t, model.texts, 1)
	assert.Contains(t, model.texts[0], "cannot refer to a stored blob")
}

// TestUserPictureByReference: a client that put a user's picture in the
// store starts the run with a reference; the model reads the picture.
func TestUserPictureByReference(t *testing.T) {
	dir := t.TempDir()
	pic := bytes.Repeat([]byte{7}, 3<<20)
	key := blobKey(pic)
	require.NoError(t, DirBlobs(dir).Put(context.Background(), key, pic))
	var got []byte
	send := func(_ context.Context, msgs []agentloop.Message, _ []llmtoolkit.Tool) (agentloop.Response, error) {
		got = msgs[0].Parts[0].Data
		return agentloop.Response{Content: "a picture of sevens"}, nil
	}
	env := newEnv(t, &Activities{Send: send, Blobs: DirBlobs(dir)})
	env.ExecuteWorkflow(WorkflowName, RunInput{Messages: []agentloop.Message{
		agentloop.UserMessageWithParts("what is this?", llmtoolkit.ImageURLPart("image/png", BlobScheme+key)),
	}})
	out := runOutput(t, env)
	require.NoError(t, out.Error())
	assert.True(t, bytes.Equal(pic, got), "the model reads the picture (%d bytes)", len(got))
}
