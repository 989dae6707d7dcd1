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

// streamJSON writes the entry, its bytes encoded straight into s.
func (c OpenAIResponsesContent) streamJSON(s *jsonStream) { c.object().streamJSON(s) }

// object is the entry as a JSON object.
func (c OpenAIResponsesContent) object() *jsonObject {
	o := (&jsonObject{}).add("type", c.Type)
	switch c.Type {
	case "input_image":
		return o.add("image_url", openAIImageURL(c.URL, c.MediaType, c.Data)).add("detail", detailOrAuto(c.Detail))
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
	switch openAIKindOf(p, true) {
	case openAIText:
		return OpenAIResponsesContent{Type: "input_text", Text: p.Text}, p.Text != ""
	case openAIImage:
		return OpenAIResponsesContent{Type: "input_image", MediaType: p.MediaType, Data: p.Data, URL: p.URL}, true
	case openAIFile:
		return OpenAIResponsesContent{Type: "input_file", MediaType: p.MediaType, Data: p.Data, URL: p.URL, Filename: p.Name}, true
	}
	return OpenAIResponsesContent{Type: "input_text", Text: partNote(p, "the OpenAI Responses API", "PNG, JPEG, GIF and WebP images and PDF files")}, true
}

// openAIResponsesContents is the text (when not empty) then the parts.
func openAIResponsesContents(text string, parts []llmtoolkit.Part) []OpenAIResponsesContent {
	return textThenParts(text, parts, func(t string) OpenAIResponsesContent { return OpenAIResponsesContent{Type: "input_text", Text: t} }, OpenAIResponsesPart)
}

// carriesParts reports whether the item's content or output is written
// as an array (partsObject).
func (it OpenAIResponsesItem) carriesParts() bool {
	return len(it.Raw) == 0 && len(it.ContentParts) > 0 && (it.Type == "message" || it.Type == "function_call_output")
}

// streamJSON writes the item as MarshalJSON does; the bytes of its parts
// are encoded straight into s.
func (it OpenAIResponsesItem) streamJSON(s *jsonStream) {
	if !it.carriesParts() {
		s.marshal(it)
		return
	}
	it.partsObject().streamJSON(s)
}

// partsObject is a message or a function_call_output whose content or
// output is an array.
func (it OpenAIResponsesItem) partsObject() *jsonObject {
	o := (&jsonObject{}).add("type", it.Type)
	if it.Type == "message" {
		return o.add("role", it.Role).add("content", objects(it.ContentParts))
	}
	return o.add("call_id", it.CallID).add("output", objects(it.ContentParts))
}
