package provider

import (
	"encoding/base64"
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
		return appendAnthropicSource(make([]byte, 0, anthropicSourceLen(s)), s), nil
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

// anthropicSourceLen is the length of a source's JSON, exact for a base64
// source.
func anthropicSourceLen(s AnthropicSource) int {
	if s.Type != "base64" {
		return 64 + len(s.URL) + len(s.Text) + len(s.MediaType)
	}
	return len(`{"type":"base64","media_type":,"data":""}`) + len(quote(s.MediaType)) + base64.StdEncoding.EncodedLen(len(s.Data))
}

// appendAnthropicSource appends a source's JSON to b.
func appendAnthropicSource(b []byte, s AnthropicSource) []byte {
	if s.Type != "base64" {
		j, _ := s.MarshalJSON() // small: a URL or a text
		return append(b, j...)
	}
	b = append(b, `{"type":"base64","media_type":`...)
	b = append(b, quote(s.MediaType)...)
	b = append(b, `,"data":"`...)
	b = base64.StdEncoding.AppendEncode(b, s.Data)
	return append(b, `"}`...)
}

// quote is s as a JSON string.
func quote(s string) string {
	q, _ := json.Marshal(s) // a string always encodes
	return string(q)
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

// marshalAnthropicMedia writes an image or a document block in one
// buffer of its exact size.
func marshalAnthropicMedia(b AnthropicContentBlock) ([]byte, error) {
	return appendAnthropicMedia(make([]byte, 0, anthropicMediaLen(b)), b), nil
}

func anthropicMediaLen(b AnthropicContentBlock) int {
	n := len(`{"type":"","source":}`) + len(b.Type) + 8
	if b.Source != nil {
		n += anthropicSourceLen(*b.Source)
	}
	if b.Title != "" {
		n += len(`,"title":`) + len(quote(b.Title))
	}
	return n
}

func appendAnthropicMedia(out []byte, b AnthropicContentBlock) []byte {
	out = append(out, `{"type":`...)
	out = append(out, quote(b.Type)...)
	out = append(out, `,"source":`...)
	if b.Source == nil {
		out = append(out, "null"...)
	} else {
		out = appendAnthropicSource(out, *b.Source)
	}
	if b.Title != "" {
		out = append(out, `,"title":`...)
		out = append(out, quote(b.Title)...)
	}
	return append(out, '}')
}

// marshalAnthropicToolResultBlocks writes a tool_result whose content is
// blocks, in one buffer: its images' and documents' bytes are encoded
// straight into it (no nested encoder copies them).
func marshalAnthropicToolResultBlocks(b AnthropicContentBlock) ([]byte, error) {
	small := make([][]byte, len(b.Blocks))
	n := len(`{"type":"tool_result","tool_use_id":,"content":[],"is_error":true}`) + len(quote(b.ToolUseID))
	for i, blk := range b.Blocks {
		if blk.Type == "image" || blk.Type == "document" {
			n += anthropicMediaLen(blk) + 1
			continue
		}
		j, err := json.Marshal(blk)
		if err != nil {
			return nil, err
		}
		small[i] = j
		n += len(j) + 1
	}
	out := make([]byte, 0, n)
	out = append(out, `{"type":"tool_result","tool_use_id":`...)
	out = append(out, quote(b.ToolUseID)...)
	out = append(out, `,"content":[`...)
	for i, blk := range b.Blocks {
		if i > 0 {
			out = append(out, ',')
		}
		if small[i] != nil {
			out = append(out, small[i]...)
		} else {
			out = appendAnthropicMedia(out, blk)
		}
	}
	out = append(out, ']')
	if b.IsError {
		out = append(out, `,"is_error":true`...)
	}
	return append(out, '}'), nil
}
