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

// MarshalJSON writes the fields of the source's type; a base64 source's
// bytes go from Data into the encoder's buffer with no copy before.
func (s AnthropicSource) MarshalJSON() ([]byte, error) {
	switch s.Type {
	case "base64":
		return json.Marshal(struct {
			Type      string `json:"type"`
			MediaType string `json:"media_type"`
			Data      []byte `json:"data"`
		}{s.Type, s.MediaType, s.Data})
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
	blocks := make([]AnthropicContentBlock, 0, len(parts)+1)
	if text != "" {
		blocks = append(blocks, AnthropicContentBlock{Type: "text", Text: text})
	}
	for _, p := range parts {
		if b, ok := AnthropicPartBlock(p); ok {
			blocks = append(blocks, b)
		}
	}
	return blocks
}

// anthropicUserMessage is a user message's blocks: its text, then its
// parts.
func anthropicUserMessage(text string, parts []llmtoolkit.Part) AnthropicMessage {
	if len(parts) == 0 {
		return AnthropicMessage{Role: "user", Content: []AnthropicContentBlock{{Type: "text", Text: text}}}
	}
	return AnthropicMessage{Role: "user", Content: anthropicPartBlocks(text, parts)}
}

// marshalAnthropicMedia writes an image or a document block.
func marshalAnthropicMedia(b AnthropicContentBlock) ([]byte, error) {
	return json.Marshal(struct {
		Type   string           `json:"type"`
		Source *AnthropicSource `json:"source"`
		Title  string           `json:"title,omitempty"`
	}{b.Type, b.Source, b.Title})
}

// marshalAnthropicToolResultBlocks writes a tool_result whose content is
// blocks.
func marshalAnthropicToolResultBlocks(b AnthropicContentBlock) ([]byte, error) {
	return json.Marshal(struct {
		Type      string                  `json:"type"`
		ToolUseID string                  `json:"tool_use_id"`
		Content   []AnthropicContentBlock `json:"content"`
		IsError   bool                    `json:"is_error,omitempty"`
	}{b.Type, b.ToolUseID, b.Blocks, b.IsError})
}
