package provider

import (
	"encoding/json"

	"github.com/llmtoolkit/llmtoolkit"
)

// OpenAIResponsesContent is one entry of a Responses API content array:
// the "output" of a function_call_output, or the "content" of a message.
type OpenAIResponsesContent struct {
	// Type is "input_text", "input_image" or "input_file".
	Type string
	// Text is an input_text's text.
	Text string
	// MediaType and Data are an input_image's or an input_file's bytes,
	// written as a data URL ("image_url" or "file_data").
	MediaType string
	Data      []byte
	// URL is an input_image's "image_url" or an input_file's "file_url"
	// when the bytes are not given.
	URL string
	// Filename is an input_file's name.
	Filename string
	// Detail is an input_image's detail: "auto" when empty.
	Detail string
}

// MarshalJSON writes the fields of the entry's type.
func (c OpenAIResponsesContent) MarshalJSON() ([]byte, error) {
	switch c.Type {
	case "input_image":
		detail := c.Detail
		if detail == "" {
			detail = "auto"
		}
		var url any = c.URL
		if c.URL == "" {
			url = dataURL{c.MediaType, c.Data}
		}
		return json.Marshal(struct {
			Type     string `json:"type"`
			ImageURL any    `json:"image_url"`
			Detail   string `json:"detail"`
		}{c.Type, url, detail})
	case "input_file":
		if c.URL != "" {
			return json.Marshal(struct {
				Type     string `json:"type"`
				FileURL  string `json:"file_url"`
				Filename string `json:"filename,omitempty"`
			}{c.Type, c.URL, c.Filename})
		}
		return json.Marshal(struct {
			Type     string  `json:"type"`
			FileData dataURL `json:"file_data"`
			Filename string  `json:"filename,omitempty"`
		}{c.Type, dataURL{c.MediaType, c.Data}, c.Filename})
	}
	return json.Marshal(struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}{c.Type, c.Text})
}

// OpenAIResponsesPart converts a part to its Responses API content entry:
// input_text, input_image (PNG, JPEG, GIF, WebP; bytes or URL), input_file
// (a PDF, bytes or URL, with its name). Any other part becomes an
// input_text that names it; an empty text part gives ok false.
func OpenAIResponsesPart(p llmtoolkit.Part) (c OpenAIResponsesContent, ok bool) {
	switch {
	case p.Kind == llmtoolkit.PartText:
		return OpenAIResponsesContent{Type: "input_text", Text: p.Text}, p.Text != ""
	case p.Kind == llmtoolkit.PartImage && (p.URL != "" || isImageType(p.MediaType, true)):
		return OpenAIResponsesContent{Type: "input_image", MediaType: p.MediaType, Data: p.Data, URL: p.URL}, true
	case p.Kind == llmtoolkit.PartFile && p.MediaType == "application/pdf":
		return OpenAIResponsesContent{Type: "input_file", MediaType: p.MediaType, Data: p.Data, URL: p.URL, Filename: p.Name}, true
	}
	return OpenAIResponsesContent{Type: "input_text", Text: partNote(p, "the OpenAI Responses API", "PNG, JPEG, GIF and WebP images and PDF files")}, true
}

// openAIResponsesContents is the text (when not empty) then the parts.
func openAIResponsesContents(text string, parts []llmtoolkit.Part) []OpenAIResponsesContent {
	out := make([]OpenAIResponsesContent, 0, len(parts)+1)
	if text != "" {
		out = append(out, OpenAIResponsesContent{Type: "input_text", Text: text})
	}
	for _, p := range parts {
		if c, ok := OpenAIResponsesPart(p); ok {
			out = append(out, c)
		}
	}
	return out
}

// marshalOpenAIResponsesParts writes a message or a function_call_output
// whose content or output is an array.
func marshalOpenAIResponsesParts(it OpenAIResponsesItem) ([]byte, error) {
	if it.Type == "message" {
		return json.Marshal(struct {
			Type    string                   `json:"type"`
			Role    string                   `json:"role"`
			Content []OpenAIResponsesContent `json:"content"`
		}{it.Type, it.Role, it.ContentParts})
	}
	return json.Marshal(struct {
		Type   string                   `json:"type"`
		CallID string                   `json:"call_id"`
		Output []OpenAIResponsesContent `json:"output"`
	}{it.Type, it.CallID, it.ContentParts})
}
