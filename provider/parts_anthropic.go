package provider

import (
	"encoding/json"

	"github.com/llmtoolkit/llmtoolkit"
)

// AnthropicSource is the "source" of an image or a document block: base64
// bytes, a URL, or (a plain-text document) text.
type AnthropicSource struct {
	// Type is "base64", "url" or "text".
	Type string `json:"type"`
	// MediaType is the bytes' media type ("image/png",
	// "application/pdf", "text/plain").
	MediaType string `json:"media_type,omitempty"`
	// Data holds the bytes of a "base64" source; written as base64.
	Data []byte `json:"-"`
	// Text is a "text" source's text.
	Text string `json:"-"`
	// URL is a "url" source's URL.
	URL string `json:"url,omitempty"`
}

// MarshalJSON writes the fields of the source's type; a base64 source is
// written in one buffer of its exact size, its bytes encoded straight into
// it.
func (s AnthropicSource) MarshalJSON() ([]byte, error) {
	switch s.Type {
	case "base64":
		return marshalStreamed(s.streamJSON)
	case "text":
		return json.Marshal(struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      string `json:"data"`
		}{s.Type, s.MediaType, s.Text})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		URL  string `json:"url"`
	}{s.Type, s.URL})
}

// streamJSON writes the source, a base64 source's bytes encoded straight
// into st.
func (s AnthropicSource) streamJSON(st *jsonStream) {
	if s.Type != "base64" {
		st.marshal(s) // small: a URL or a text
		return
	}
	st.str(`{"type":"base64","media_type":`)
	st.quoted(s.MediaType)
	st.str(`,"data":"`)
	st.base64(s.Data)
	st.str(`"}`)
}

// AnthropicPartBlock converts a part to the block the Messages API takes
// for it, in a tool_result's content or a user message: a text block, an
// image block (PNG, JPEG, GIF, WebP; bytes or URL), a document block (a
// PDF, bytes or URL, or plain text, titled with the file's name). Any
// other part becomes a text block that names it; an empty text part gives
// ok false.
func AnthropicPartBlock(p llmtoolkit.Part) (block AnthropicContentBlock, ok bool) {
	switch {
	case p.Kind == llmtoolkit.PartText:
		return AnthropicContentBlock{Type: "text", Text: p.Text}, p.Text != ""
	case p.Kind == llmtoolkit.PartImage && p.URL != "":
		return AnthropicContentBlock{Type: "image", Source: &AnthropicSource{Type: "url", URL: p.URL}}, true
	case p.Kind == llmtoolkit.PartImage && isImageType(p.MediaType, true):
		return AnthropicContentBlock{Type: "image", Source: &AnthropicSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}}, true
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "application/pdf" && p.URL != "":
		return AnthropicContentBlock{Type: "document", Title: p.Name, Source: &AnthropicSource{Type: "url", URL: p.URL}}, true
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "application/pdf":
		return AnthropicContentBlock{Type: "document", Title: p.Name, Source: &AnthropicSource{Type: "base64", MediaType: p.MediaType, Data: p.Data}}, true
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "text/plain" && p.URL == "":
		return AnthropicContentBlock{Type: "document", Title: p.Name, Source: &AnthropicSource{Type: "text", MediaType: p.MediaType, Text: string(p.Data)}}, true
	}
	return AnthropicContentBlock{Type: "text", Text: partNote(p, "the Anthropic Messages API", "PNG, JPEG, GIF and WebP images and PDF or plain-text documents")}, true
}

// anthropicPartBlocks is the text (when not empty) followed by the parts'
// blocks.
func anthropicPartBlocks(text string, parts []llmtoolkit.Part) []AnthropicContentBlock {
	return textThenParts(text, parts, func(t string) AnthropicContentBlock { return AnthropicContentBlock{Type: "text", Text: t} }, AnthropicPartBlock)
}

// anthropicUserMessage is a user message's blocks: its text, then its
// parts.
func anthropicUserMessage(text string, parts []llmtoolkit.Part) AnthropicMessage {
	if len(parts) == 0 {
		return AnthropicMessage{Role: "user", Content: []AnthropicContentBlock{{Type: "text", Text: text}}}
	}
	return AnthropicMessage{Role: "user", Content: anthropicPartBlocks(text, parts)}
}

// streamJSON writes the message as encoding/json does, its blocks'
// bytes encoded straight into s.
func (m AnthropicMessage) streamJSON(s *jsonStream) {
	s.str(`{"role":`)
	s.quoted(m.Role)
	s.str(`,"content":`)
	streamSlice(s, m.Content)
	s.str("}")
}

// streamJSON writes the block as MarshalJSON does; an image's or a
// document's bytes, and those of a tool_result's blocks, are encoded
// straight into s.
func (b AnthropicContentBlock) streamJSON(s *jsonStream) {
	switch {
	case len(b.Raw) > 0:
		s.marshal(b)
	case b.Type == "image" || b.Type == "document":
		s.str(`{"type":`)
		s.quoted(b.Type)
		s.str(`,"source":`)
		s.value(b.Source)
		if b.Title != "" {
			s.str(`,"title":`)
			s.quoted(b.Title)
		}
		s.str("}")
	case b.Type == "tool_result" && len(b.Blocks) > 0:
		s.str(`{"type":"tool_result","tool_use_id":`)
		s.quoted(b.ToolUseID)
		s.str(`,"content":`)
		streamSlice(s, b.Blocks)
		if b.IsError {
			s.str(`,"is_error":true`)
		}
		s.str("}")
	default:
		s.marshal(b)
	}
}
