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

// object is the part as a JSON object.
func (c OpenAIContentPart) object() *jsonObject {
	o := (&jsonObject{}).add("type", c.Type)
	switch c.Type {
	case "image_url":
		detail := c.Detail
		if detail == "" {
			detail = "auto"
		}
		var url any = c.URL
		if c.URL == "" {
			url = dataURL{c.MediaType, c.Data}
		}
		return o.add("image_url", (&jsonObject{}).add("url", url).add("detail", detail))
	case "file":
		f := (&jsonObject{}).add("file_data", dataURL{c.MediaType, c.Data})
		if c.Filename != "" {
			f.add("filename", c.Filename)
		}
		return o.add("file", f)
	}
	return o.add("text", c.Text)
}

// marshalOpenAIPartsMessage writes a message whose content is an array,
// in one buffer.
func marshalOpenAIPartsMessage(m OpenAIMessage) ([]byte, error) {
	parts := make([]*jsonObject, len(m.Parts))
	for i, p := range m.Parts {
		parts[i] = p.object()
	}
	o := (&jsonObject{}).add("role", m.Role).add("content", parts)
	if m.ToolCallID != "" {
		o.add("tool_call_id", m.ToolCallID)
	}
	return o.marshal()
}

// openAIChatTakes says what the Chat Completions format carries.
const openAIChatTakes = "PNG, JPEG, GIF and WebP images and PDF files as bytes (images by URL too)"

// OpenAIContentPartOf converts a part to a Chat Completions content part
// of a user message: text, image_url (PNG, JPEG, GIF, WebP; bytes or URL),
// file (a PDF's bytes, with its name). Any other part becomes a text part
// that names it; an empty text part gives ok false.
func OpenAIContentPartOf(p llmtoolkit.Part) (c OpenAIContentPart, ok bool) {
	switch {
	case p.Kind == llmtoolkit.PartText:
		return OpenAIContentPart{Type: "text", Text: p.Text}, p.Text != ""
	case p.Kind == llmtoolkit.PartImage && (p.URL != "" || isImageType(p.MediaType, true)):
		return OpenAIContentPart{Type: "image_url", MediaType: p.MediaType, Data: p.Data, URL: p.URL}, true
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "application/pdf" && p.URL == "":
		return OpenAIContentPart{Type: "file", MediaType: p.MediaType, Data: p.Data, Filename: p.Name}, true
	}
	return OpenAIContentPart{Type: "text", Text: partNote(p, "OpenAI Chat Completions", openAIChatTakes)}, true
}

// openAIContentParts is the text (when not empty) then the parts.
func openAIContentParts(text string, parts []llmtoolkit.Part) []OpenAIContentPart {
	out := make([]OpenAIContentPart, 0, len(parts)+1)
	if text != "" {
		out = append(out, OpenAIContentPart{Type: "text", Text: text})
	}
	for _, p := range parts {
		if c, ok := OpenAIContentPartOf(p); ok {
			out = append(out, c)
		}
	}
	return out
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
