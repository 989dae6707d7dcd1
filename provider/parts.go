package provider

import (
	"encoding/base64"
	"encoding/json"
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
// base64 alphabet needing no escape) in one buffer of its exact size.
func (u dataURL) MarshalJSON() ([]byte, error) {
	return u.appendJSON(make([]byte, 0, u.jsonLen())), nil
}

// jsonLen is the length of the URL's JSON string.
func (u dataURL) jsonLen() int {
	return len(`"data:;base64,"`) + len(u.quotedType()) + base64.StdEncoding.EncodedLen(len(u.data))
}

func (u dataURL) quotedType() string {
	mt := strconv.Quote(u.mediaType)
	return mt[1 : len(mt)-1]
}

// appendJSON appends the URL's JSON string to b.
func (u dataURL) appendJSON(b []byte) []byte {
	b = append(b, `"data:`...)
	b = append(b, u.quotedType()...)
	b = append(b, ";base64,"...)
	b = base64.StdEncoding.AppendEncode(b, u.data)
	return append(b, '"')
}

// b64Bytes is a jsonObject member written as a base64 string.
type b64Bytes []byte

// jsonObject builds a JSON object in one buffer: small members are
// encoded with encoding/json, data URLs and nested objects are written
// straight into the buffer, so that an object holding an image's bytes is
// written with one allocation of its exact size and no nested copy.
type jsonObject struct {
	keys []string
	vals []any // a dataURL, a *jsonObject, a []*jsonObject, or a value for json.Marshal
	enc  [][]byte
}

func (o *jsonObject) add(key string, v any) *jsonObject {
	o.keys, o.vals = append(o.keys, key), append(o.vals, v)
	return o
}

// size encodes the small members and returns the object's length.
func (o *jsonObject) size() (int, error) {
	o.enc = make([][]byte, len(o.vals))
	n := 2
	for i, v := range o.vals {
		n += len(strconv.Quote(o.keys[i])) + 2
		switch v := v.(type) {
		case dataURL:
			n += v.jsonLen()
		case b64Bytes:
			n += base64.StdEncoding.EncodedLen(len(v)) + 2
		case *jsonObject:
			m, err := v.size()
			if err != nil {
				return 0, err
			}
			n += m
		case []*jsonObject:
			n += 2
			for _, e := range v {
				m, err := e.size()
				if err != nil {
					return 0, err
				}
				n += m + 1
			}
		default:
			j, err := json.Marshal(v)
			if err != nil {
				return 0, err
			}
			o.enc[i] = j
			n += len(j)
		}
	}
	return n, nil
}

// appendJSON appends the object, sized first, to b.
func (o *jsonObject) appendJSON(b []byte) []byte {
	b = append(b, '{')
	for i, v := range o.vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, o.keys[i])
		b = append(b, ':')
		switch v := v.(type) {
		case dataURL:
			b = v.appendJSON(b)
		case b64Bytes:
			b = append(b, '"')
			b = base64.StdEncoding.AppendEncode(b, v)
			b = append(b, '"')
		case *jsonObject:
			b = v.appendJSON(b)
		case []*jsonObject:
			b = append(b, '[')
			for j, e := range v {
				if j > 0 {
					b = append(b, ',')
				}
				b = e.appendJSON(b)
			}
			b = append(b, ']')
		default:
			b = append(b, o.enc[i]...)
		}
	}
	return append(b, '}')
}

// marshal writes the object in one buffer of its exact size.
func (o *jsonObject) marshal() ([]byte, error) {
	n, err := o.size()
	if err != nil {
		return nil, err
	}
	return o.appendJSON(make([]byte, 0, n)), nil
}

// String returns the URL.
func (u dataURL) String() string {
	return "data:" + u.mediaType + ";base64," + base64.StdEncoding.EncodeToString(u.data)
}
