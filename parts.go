package llmtoolkit

import (
	"context"
	"fmt"
	"sync"
)

// PartKind says what a [Part] holds.
type PartKind string

// The kinds of [Part].
const (
	// PartText is text (Part.Text).
	PartText PartKind = "text"
	// PartImage is an image: its bytes and media type (Part.Data,
	// Part.MediaType), or a URL (Part.URL).
	PartImage PartKind = "image"
	// PartFile is a file or document (a PDF, audio, ...): its bytes, media
	// type and name (Part.Data, Part.MediaType, Part.Name), or a URL.
	PartFile PartKind = "file"
)

// Part is one piece of multimodal content a tool gives the model beside
// its text ([Result.Parts]), or a user message carries
// (agentloop.Message.Parts): text, an image or a file (a document).
//
// Data is shared, never copied, by every layer that passes a Part on
// (wrappers, the agent loop, the provider encoders): whoever builds a Part
// must not change Data afterwards. Its JSON form carries Data as base64;
// the zero fields are left out.
type Part struct {
	// Kind says what the part holds.
	Kind PartKind `json:"kind"`
	// Text is a text part's text.
	Text string `json:"text,omitempty"`
	// MediaType is an image's or a file's media type ("image/png",
	// "application/pdf", "audio/wav").
	MediaType string `json:"media_type,omitempty"`
	// Data holds an image's or a file's bytes (empty when URL is set).
	Data []byte `json:"data,omitempty"`
	// URL, instead of Data, points at an image or a file the provider
	// fetches itself (an https URL).
	URL string `json:"url,omitempty"`
	// Name is a file's name ("report.pdf"), shown to the model where the
	// format has a place for it.
	Name string `json:"name,omitempty"`
}

// TextPart returns a text part.
func TextPart(text string) Part { return Part{Kind: PartText, Text: text} }

// ImagePart returns an image part holding data, of the given media type
// ("image/png", "image/jpeg", "image/gif", "image/webp").
func ImagePart(mediaType string, data []byte) Part {
	return Part{Kind: PartImage, MediaType: mediaType, Data: data}
}

// ImageURLPart returns an image part that points at url. mediaType may be
// empty when unknown.
func ImageURLPart(mediaType, url string) Part {
	return Part{Kind: PartImage, MediaType: mediaType, URL: url}
}

// FilePart returns a file part (a document): its name, media type
// ("application/pdf") and bytes.
func FilePart(name, mediaType string, data []byte) Part {
	return Part{Kind: PartFile, Name: name, MediaType: mediaType, Data: data}
}

// Size is the number of bytes the part carries: its text, data and URL.
// It is what a byte budget counts (agentloop's MaxTurnResultBytes).
func (p Part) Size() int { return len(p.Text) + len(p.Data) + len(p.URL) }

// String describes the part in one line without its bytes: "image
// (image/png, 1234 bytes)", "file report.pdf (application/pdf, 99 bytes)",
// "image (https://...)", "text (12 bytes)". Formats that cannot carry a
// part say so with it.
func (p Part) String() string {
	what := string(p.Kind)
	if p.Name != "" {
		what += " " + p.Name
	}
	switch {
	case p.Kind == PartText:
		return fmt.Sprintf("%s (%d bytes)", what, len(p.Text))
	case p.URL != "":
		if p.MediaType != "" {
			return fmt.Sprintf("%s (%s, %s)", what, p.MediaType, p.URL)
		}
		return fmt.Sprintf("%s (%s)", what, p.URL)
	}
	return fmt.Sprintf("%s (%s, %d bytes)", what, p.MediaType, len(p.Data))
}

// PartsSize is the sum of the parts' [Part.Size].
func PartsSize(parts []Part) int {
	n := 0
	for _, p := range parts {
		n += p.Size()
	}
	return n
}

// partSink is one link of the chain of functions [Attach] tells: the
// running Execute's slot, and the wrappers between it and the tool that
// installed a Parts listener ([Listeners]).
type partSink struct {
	fn   func([]Part)
	next *partSink
}

type partSinkKey struct{}

// Attach gives the model parts beside the running tool call's text, in
// order: [Execute] puts them on [Result.Parts], after the Content. A tool
// calls it from Resolve (or a typed agentresolver.Func) with the context
// it was given, the way it calls [Show]; several calls append. It is the
// one way a tool returns an image or a document:
//
//	llmtoolkit.Attach(ctx, llmtoolkit.ImagePart("image/png", png))
//	return "chart.png: image/png, 12 KiB, 640x480", nil
//
// Parts attached by a call that fails stay on its error result. A
// wrapper that runs a call itself with [Execute] (an adapter, a recipe)
// attaches the inner result's parts to its own context. Outside Execute,
// Attach tells only the Parts listeners of ctx ([Listeners]). The parts' Data
// is not copied.
func Attach(ctx context.Context, parts ...Part) {
	if len(parts) == 0 {
		return
	}
	for s, _ := ctx.Value(partSinkKey{}).(*partSink); s != nil; s = s.next {
		if s.fn != nil {
			s.fn(parts)
		}
	}
}

// PartsKept reports whether parts attached with ctx reach anyone: a
// running [Execute] or a Parts listener ([Listeners]). A resolver that
// receives content it can only pass as parts (mcp.Client, an adapter)
// describes it in its text instead when they would be dropped.
func PartsKept(ctx context.Context) bool {
	for s, _ := ctx.Value(partSinkKey{}).(*partSink); s != nil; s = s.next {
		if s.fn != nil {
			return true
		}
	}
	return false
}

// partSlot collects the parts attached during one execution. After take,
// later attaches (a tool's goroutine that outlives its call) are dropped.
type partSlot struct {
	mu     sync.Mutex
	parts  []Part
	closed bool
}

func (s *partSlot) add(parts []Part) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.parts = append(s.parts, parts...)
	}
}

func (s *partSlot) take() []Part {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	return s.parts
}

// withPartSlot starts a fresh chain of part sinks for one execution: the
// sinks of an outer Execute are not told (the wrapper that called this
// Execute attaches the result's parts itself).
func withPartSlot(ctx context.Context) (context.Context, *partSlot) {
	slot := &partSlot{}
	return context.WithValue(ctx, partSinkKey{}, &partSink{fn: slot.add}), slot
}

// stepParts is the parts of a recipe's step results, in plan order: a
// recipe's result carries every step's parts after its composed text.
func stepParts(results []Result) []Part {
	var parts []Part
	for _, r := range results {
		parts = append(parts, r.Parts...)
	}
	return parts
}
