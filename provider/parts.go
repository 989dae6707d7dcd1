package provider

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// Multimodal parts (llmtoolkit.Part) in the four formats. Each format
// writes the parts it can carry as its API reference documents them
// today, in order after the text, and a part it cannot carry as a line of
// text that names it (its kind, name, media type and size), never
// silently:
//
//	                 tool result                          user message
//	Anthropic        tool_result content blocks:          text, image, document blocks
//	                 text, image, document
//	OpenAI Responses function_call_output "output" as an  message "content" as an array
//	                 array of input_text, input_image,    of the same
//	                 input_file
//	OpenAI Chat      the text in the tool message; the    "content" as an array of text,
//	                 images and PDFs in one user message  image_url, file parts
//	                 right after the turn's tool messages
//	Gemini           functionResponse "parts" (inlineData; text, inlineData, fileData
//	                 Gemini 3), or inlineData parts after parts
//	                 the turn's function responses
//	                 (GeminiPartsAfterResponses: models
//	                 before Gemini 3)
//
// No format copies Part.Data: the wire structs share it. Their
// MarshalJSON writes it as base64 into one buffer of exact size, which
// json.Marshal then copies twice (into its own buffer, and the slice it
// returns); [MarshalRequest] writes the whole request body with the
// base64 encoded straight into its one buffer (1.33× the bytes), and
// [WriteRequest] into an io.Writer in chunks.

// partNote is the line that stands for a part a format cannot carry.
func partNote(p llmtoolkit.Part, format, takes string) string {
	return fmt.Sprintf("[%s not sent: %s takes %s]", p, format, takes)
}

// joinText joins the non-empty texts with blank lines.
func joinText(texts ...string) string {
	var out []string
	for _, s := range texts {
		if s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, "\n\n")
}

// isImageType reports whether the media type is one of the image types
// every format takes (Gemini: not GIF).
func isImageType(mediaType string, gif bool) bool {
	switch mediaType {
	case "image/png", "image/jpeg", "image/webp":
		return true
	case "image/gif":
		return gif
	}
	return false
}

// dataURL is a "data:TYPE;base64,DATA" URL written from bytes, its
// base64 encoded straight into the JSON string.
type dataURL struct {
	mediaType string
	data      []byte
}

// streamJSON writes the URL as a JSON string: the media type escaped as
// encoding/json escapes it, the base64 alphabet needing no escape.
func (u dataURL) streamJSON(s *jsonStream) {
	mt, err := json.Marshal(u.mediaType)
	if err != nil {
		s.err = err
		return
	}
	s.str(`"data:`)
	s.raw(mt[1 : len(mt)-1])
	s.str(";base64,")
	s.base64(u.data)
	s.str(`"`)
}

// MarshalJSON writes the URL as a JSON string in one buffer of its exact
// size.
func (u dataURL) MarshalJSON() ([]byte, error) { return marshalStreamed(u.streamJSON) }

// String returns the URL.
func (u dataURL) String() string {
	return "data:" + u.mediaType + ";base64," + base64.StdEncoding.EncodeToString(u.data)
}

// b64Bytes is a jsonObject member written as a base64 string.
type b64Bytes []byte

func (b b64Bytes) streamJSON(s *jsonStream) {
	s.str(`"`)
	s.base64(b)
	s.str(`"`)
}

// jsonObject is a JSON object written member by member into a
// jsonStream: the members that hold bytes (a dataURL, b64Bytes, a nested
// object or an array of them) stream them, small members are encoded
// with encoding/json.
type jsonObject struct {
	keys []string
	vals []any // a jsonStreamer, a []*jsonObject, or a value for json.Marshal
}

func (o *jsonObject) add(key string, v any) *jsonObject {
	o.keys, o.vals = append(o.keys, key), append(o.vals, v)
	return o
}

// streamJSON writes the object's members in order.
func (o *jsonObject) streamJSON(s *jsonStream) {
	s.str("{")
	for i, v := range o.vals {
		s.key(o.keys[i], i == 0)
		switch v := v.(type) {
		case jsonStreamer:
			v.streamJSON(s)
		case []*jsonObject:
			s.str("[")
			for j, e := range v {
				if j > 0 {
					s.str(",")
				}
				e.streamJSON(s)
			}
			s.str("]")
		default:
			s.marshal(v)
		}
	}
	s.str("}")
}

// marshal writes the object in one buffer of its exact size.
func (o *jsonObject) marshal() ([]byte, error) { return marshalStreamed(o.streamJSON) }
