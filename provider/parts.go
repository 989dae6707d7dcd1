package provider

import (
	"encoding/base64"
	"fmt"
	"strconv"
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
// Bytes are written as base64 straight from Part.Data into the encoder's
// buffer (Anthropic, Gemini: []byte fields), or into one data URL of exact
// size (OpenAI): no format copies the bytes before json.Marshal runs.

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

// dataURL is a "data:TYPE;base64,DATA" URL written from bytes: its JSON
// form is one string built in one buffer of exact size.
type dataURL struct {
	mediaType string
	data      []byte
}

// MarshalJSON writes the URL as a JSON string (the media type quoted, the
// base64 alphabet needing no escape).
func (u dataURL) MarshalJSON() ([]byte, error) {
	mt := strconv.Quote(u.mediaType)
	mt = mt[1 : len(mt)-1]
	n := base64.StdEncoding.EncodedLen(len(u.data))
	b := make([]byte, 0, len(`"data:;base64,"`)+len(mt)+n)
	b = append(b, `"data:`...)
	b = append(b, mt...)
	b = append(b, ";base64,"...)
	b = base64.StdEncoding.AppendEncode(b, u.data)
	return append(b, '"'), nil
}

// String returns the URL.
func (u dataURL) String() string {
	return "data:" + u.mediaType + ";base64," + base64.StdEncoding.EncodeToString(u.data)
}
