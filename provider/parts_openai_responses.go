package provider

import (
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

// MarshalJSON writes the fields of the entry's type; an image's or a
// file's bytes go into one buffer of its exact size.
func (c OpenAIResponsesContent) MarshalJSON() ([]byte, error) { return c.object().marshal() }

// object is the entry as a JSON object.
func (c OpenAIResponsesContent) object() *jsonObject {
	o := (&jsonObject{}).add("type", c.Type)
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
		return o.add("image_url", url).add("detail", detail)
	case "input_file":
		if c.URL != "" {
			o.add("file_url", c.URL)
		} else {
			o.add("file_data", dataURL{c.MediaType, c.Data})
		}
		if c.Filename != "" {
			o.add("filename", c.Filename)
		}
		return o
	}
	return o.add("text", c.Text)
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
// whose content or output is an array, in one buffer.
func marshalOpenAIResponsesParts(it OpenAIResponsesItem) ([]byte, error) {
	parts := make([]*jsonObject, len(it.ContentParts))
	for i, p := range it.ContentParts {
		parts[i] = p.object()
	}
	o := (&jsonObject{}).add("type", it.Type)
	if it.Type == "message" {
		return o.add("role", it.Role).add("content", parts).marshal()
	}
	return o.add("call_id", it.CallID).add("output", parts).marshal()
}
