package llmtoolkit

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A text-only result encodes exactly as before parts existed: no new key.
func TestResultJSONTextOnlyUnchanged(t *testing.T) {
	cases := []struct {
		res  Result
		want string
	}{
		{Result{ToolCallID: "c1", Name: "read_file", Content: "hello"}, `{"tool_call_id":"c1","name":"read_file","content":"hello"}`},
		{Result{Name: "x", Content: "", IsError: true}, `{"name":"x","content":"","is_error":true}`},
		{Result{Name: "x", Content: "a", Display: &Display{Kind: "file"}}, `{"name":"x","content":"a","display":{"kind":"file"}}`},
		{Result{Name: "x", Content: "a", Parts: []Part{}}, `{"name":"x","content":"a"}`},
	}
	for _, tc := range cases {
		b, err := json.Marshal(tc.res)
		require.NoError(t, err)
		assert.Equal(t, tc.want, string(b))
	}
}

func TestResultJSONWithParts(t *testing.T) {
	res := Result{Name: "x", Content: "a", Parts: []Part{ImagePart("image/png", []byte{1, 2, 3}), FilePart("r.pdf", "application/pdf", []byte("%PDF")), ImageURLPart("", "https://e.x/a.png")}}
	b, err := json.Marshal(res)
	require.NoError(t, err)
	assert.Equal(t, `{"name":"x","content":"a","parts":[{"kind":"image","media_type":"image/png","data":"AQID"},{"kind":"file","media_type":"application/pdf","data":"JVBERg==","name":"r.pdf"},{"kind":"image","url":"https://e.x/a.png"}]}`, string(b))
	var back Result
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, res.Parts, back.Parts)
}

// Parts attached by a tool reach the Result through every wrapper of the
// root package, for a plain call, a failed call and a recipe; a sink bound
// by a wrapper sees them; a late Attach is dropped.
func TestAttachThroughWrappers(t *testing.T) {
	png := []byte("\x89PNG fake")
	var late func()
	var mu sync.Mutex
	stub := newStub(map[string]func(context.Context, Call) (string, error){
		"look": func(ctx context.Context, _ Call) (string, error) {
			Attach(ctx, ImagePart("image/png", png))
			Attach(ctx, TextPart("caption"), FilePart("a.pdf", "application/pdf", []byte("%PDF-1.7")))
			mu.Lock()
			late = func() { Attach(ctx, TextPart("too late")) }
			mu.Unlock()
			return "looked", nil
		},
		"fail": func(ctx context.Context, _ Call) (string, error) {
			Attach(ctx, ImagePart("image/png", png))
			return "", errors.New("broken")
		},
	}, simpleTool("look"), simpleTool("fail"))
	rec := withRecipes(stub, map[string]Recipe{"both": func(map[string]any) Plan {
		return Plan{Serial: []Call{{Name: "look"}}, Parallel: []Call{{Name: "look"}}}
	}})
	_, sess := PrepareSession(Filter(Compose(ResolverFunc(func(context.Context, Call) (string, error) {
		return "", ErrUnknownTool
	}), rec), func(Tool) bool { return true }), []string{"look", "fail", "both"}, map[string]any{"k": 1})
	var stack Resolver = sinkResolver{sess}

	var seen []Part
	var seenMu sync.Mutex
	ctx := WithListeners(context.Background(), Listeners{Parts: func(p []Part) { seenMu.Lock(); seen = append(seen, p...); seenMu.Unlock() }})

	res := Execute(ctx, stack, Call{ID: "1", Name: "look"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "looked", res.Content)
	require.Len(t, res.Parts, 3)
	assert.Equal(t, ImagePart("image/png", png), res.Parts[0])
	assert.Equal(t, TextPart("caption"), res.Parts[1])
	assert.Equal(t, "a.pdf", res.Parts[2].Name)
	assert.Same(t, &png[0], &res.Parts[0].Data[0], "Data is shared, not copied")
	assert.Empty(t, seen, "an outer Execute's context's sinks are not told: the caller has the Result")
	assert.Len(t, stack.(sinkResolver).seen(), 3, "a wrapper's sink sees every part")

	mu.Lock()
	late()
	mu.Unlock()
	assert.Len(t, res.Parts, 3, "an Attach after the call ended is dropped")

	res = Execute(ctx, stack, Call{ID: "2", Name: "fail"})
	assert.True(t, res.IsError)
	assert.Len(t, res.Parts, 1, "a failed call keeps what it attached")

	res = Execute(ctx, stack, Call{ID: "3", Name: "both"})
	require.False(t, res.IsError, res.Content)
	assert.Len(t, res.Parts, 6, "a recipe carries its steps' parts, in plan order")
}

// sinkResolver is a wrapper that records the parts attached below it.
type sinkResolver struct{ r Resolver }

var sinkSeen struct {
	sync.Mutex
	parts []Part
}

func (s sinkResolver) Tools() []Tool { return s.r.Tools() }
func (s sinkResolver) Resolve(ctx context.Context, call Call) (string, error) {
	sinkSeen.Lock()
	sinkSeen.parts = nil
	sinkSeen.Unlock()
	return s.r.Resolve(WithListeners(ctx, Listeners{Parts: func(p []Part) {
		sinkSeen.Lock()
		sinkSeen.parts = append(sinkSeen.parts, p...)
		sinkSeen.Unlock()
	}}), call)
}
func (s sinkResolver) seen() []Part {
	sinkSeen.Lock()
	defer sinkSeen.Unlock()
	return sinkSeen.parts
}

func TestPartStringAndSize(t *testing.T) {
	assert.Equal(t, "image (image/png, 3 bytes)", ImagePart("image/png", []byte{1, 2, 3}).String())
	assert.Equal(t, "file r.pdf (application/pdf, 4 bytes)", FilePart("r.pdf", "application/pdf", []byte("%PDF")).String())
	assert.Equal(t, "image (https://e.x/a)", ImageURLPart("", "https://e.x/a").String())
	assert.Equal(t, 7, PartsSize([]Part{TextPart("abc"), ImagePart("image/png", []byte{1, 2, 3, 4})}))
}
