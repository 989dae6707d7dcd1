package provider

import (
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agentloop"
)

// OpenAIContentPart is one entry of a Chat Completions message's
// "content" array: text, an image_url or a file.
type OpenAIContentPart struct {
	// Type is "text", "image_url" or "file".
	Type string
	// Text is a text part's text.
	Text string
	// MediaType and Data are an image's or a file's bytes, written as a
	// data URL ("url" of image_url, "file_data" of file).
	MediaType string
	Data      []byte
	// URL is an image_url's URL when the bytes are not given.
	URL string
	// Filename is a file's name.
	Filename string
	// Detail is an image_url's detail: "auto" when empty.
	Detail string
}

// MarshalJSON writes the fields of the part's type; an image's or a
// file's bytes go into one buffer of its exact size.
func (c OpenAIContentPart) MarshalJSON() ([]byte, error) { return c.object().marshal() }

// streamJSON writes the part, its bytes encoded straight into s.
func (c OpenAIContentPart) streamJSON(s *jsonStream) { c.object().streamJSON(s) }

// object is the part as a JSON object.
func (c OpenAIContentPart) object() *jsonObject {
	o := (&jsonObject{}).add("type", c.Type)
	switch c.Type {
	case "image_url":
		return o.add("image_url", (&jsonObject{}).add("url", openAIImageURL(c.URL, c.MediaType, c.Data)).add("detail", detailOrAuto(c.Detail)))
	case "file":
		f := (&jsonObject{}).add("file_data", dataURL{c.MediaType, c.Data})
		if c.Filename != "" {
			f.add("filename", c.Filename)
		}
		return o.add("file", f)
	}
	return o.add("text", c.Text)
}

// streamJSON writes the message as MarshalJSON does; the bytes of its
// parts are encoded straight into s.
func (m OpenAIMessage) streamJSON(s *jsonStream) {
	if len(m.Parts) == 0 {
		s.marshal(m)
		return
	}
	m.partsObject().streamJSON(s)
}

// partsObject is a message whose content is an array.
func (m OpenAIMessage) partsObject() *jsonObject {
	o := (&jsonObject{}).add("role", m.Role).add("content", objects(m.Parts))
	if m.ToolCallID != "" {
		o.add("tool_call_id", m.ToolCallID)
	}
	return o
}

// The parts of the two OpenAI formats (Chat Completions content parts,
// Responses content entries) have one shape, written with these.

// openAIKind is what the OpenAI formats make of a part.
type openAIKind int

const (
	openAINote  openAIKind = iota // a line that names a part the format cannot carry
	openAIText                    // text
	openAIImage                   // a PNG, JPEG, GIF or WebP image: bytes or URL
	openAIFile                    // a PDF: bytes (or a URL, where the format takes one)
)

// openAIKindOf classifies p; fileURL says whether the format takes a PDF
// by URL.
func openAIKindOf(p llmtoolkit.Part, fileURL bool) openAIKind {
	switch {
	case p.Kind == llmtoolkit.PartText:
		return openAIText
	case p.Kind == llmtoolkit.PartImage && (p.URL != "" || isImageType(p.MediaType, true)):
		return openAIImage
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "application/pdf" && (fileURL || p.URL == ""):
		return openAIFile
	}
	return openAINote
}

// openAIImageURL is an image's URL: url, or a data URL of its bytes.
func openAIImageURL(url, mediaType string, data []byte) any {
	if url != "" {
		return url
	}
	return dataURL{mediaType, data}
}

// detailOrAuto is an image's detail, "auto" when not given.
func detailOrAuto(detail string) string {
	if detail == "" {
		return "auto"
	}
	return detail
}

// objects is the JSON objects of content entries.
func objects[T interface{ object() *jsonObject }](items []T) []*jsonObject {
	out := make([]*jsonObject, len(items))
	for i, it := range items {
		out[i] = it.object()
	}
	return out
}

// textThenParts is a content array: the text's entry (when the text is
// not empty), then the entries of the parts conv gives one for.
func textThenParts[T any](text string, parts []llmtoolkit.Part, textEntry func(string) T, conv func(llmtoolkit.Part) (T, bool)) []T {
	out := make([]T, 0, len(parts)+1)
	if text != "" {
		out = append(out, textEntry(text))
	}
	for _, p := range parts {
		if c, ok := conv(p); ok {
			out = append(out, c)
		}
	}
	return out
}

// openAIChatTakes says what the Chat Completions format carries.
const openAIChatTakes = "PNG, JPEG, GIF and WebP images and PDF files as bytes (images by URL too)"

// OpenAIContentPartOf converts a part to a Chat Completions content part
// of a user message: text, image_url (PNG, JPEG, GIF, WebP; bytes or URL),
// file (a PDF's bytes, with its name). Any other part becomes a text part
// that names it; an empty text part gives ok false.
func OpenAIContentPartOf(p llmtoolkit.Part) (c OpenAIContentPart, ok bool) {
	switch openAIKindOf(p, false) {
	case openAIText:
		return OpenAIContentPart{Type: "text", Text: p.Text}, p.Text != ""
	case openAIImage:
		return OpenAIContentPart{Type: "image_url", MediaType: p.MediaType, Data: p.Data, URL: p.URL}, true
	case openAIFile:
		return OpenAIContentPart{Type: "file", MediaType: p.MediaType, Data: p.Data, Filename: p.Name}, true
	}
	return OpenAIContentPart{Type: "text", Text: partNote(p, "OpenAI Chat Completions", openAIChatTakes)}, true
}

// openAIContentParts is the text (when not empty) then the parts.
func openAIContentParts(text string, parts []llmtoolkit.Part) []OpenAIContentPart {
	return textThenParts(text, parts, func(t string) OpenAIContentPart { return OpenAIContentPart{Type: "text", Text: t} }, OpenAIContentPartOf)
}

// OpenAIToolMessages converts one turn's results to Chat Completions
// messages: a tool message per result, then, when some result has images
// or files, one user message that carries them. A tool message takes text
// only, so each result's text parts join its text, and a line says where
// its images and files went; the user message names each call before its
// parts. This is the fallback other SDKs use; [OpenAIMessages] applies it
// to every turn.
func OpenAIToolMessages(results []llmtoolkit.Result) []OpenAIMessage {
	out := make([]OpenAIMessage, 0, len(results)+1)
	var carried []OpenAIContentPart
	for _, r := range results {
		msg, media := openAIToolMessage(r)
		out = append(out, msg)
		if len(media) > 0 {
			carried = append(carried, OpenAIContentPart{Type: "text", Text: fmt.Sprintf("Attached by the %s call %s:", r.Name, r.ToolCallID)})
			carried = append(carried, media...)
		}
	}
	if len(carried) > 0 {
		out = append(out, OpenAIMessage{Role: "user", Parts: carried})
	}
	return out
}

// openAIToolMessage is a result's tool message, and the content parts of
// its images and files, to send in the user message after the turn's.
func openAIToolMessage(r llmtoolkit.Result) (OpenAIMessage, []OpenAIContentPart) {
	if len(r.Parts) == 0 {
		return OpenAIToolMessage(r), nil
	}
	texts := []string{errorPrefixed(r)}
	var media []OpenAIContentPart
	for _, p := range r.Parts {
		c, _ := OpenAIContentPartOf(p)
		switch {
		case p.Kind == llmtoolkit.PartText:
			texts = append(texts, p.Text)
		case c.Type == "text": // a part this format cannot carry
			texts = append(texts, c.Text)
		default:
			media = append(media, c)
			texts = append(texts, "["+p.String()+": in the user message after the tool results]")
		}
	}
	return OpenAIMessage{Role: "tool", ToolCallID: r.ToolCallID, Content: joinText(texts...)}, media
}

// openAIToolResult is the result a tool message records.
func openAIToolResult(m agentloop.Message) llmtoolkit.Result {
	return llmtoolkit.Result{ToolCallID: m.ToolCallID, Name: m.ToolName, Content: m.Content, IsError: m.IsError, Parts: m.Parts}
}
