package provider

import (
	"github.com/llmtoolkit/llmtoolkit"
)

// GeminiBlob is an "inlineData" value: bytes and their media type. Data
// is written as base64.
type GeminiBlob struct {
	// MimeType is the bytes' media type.
	MimeType string `json:"mimeType"`
	// Data holds the bytes.
	Data []byte `json:"data"`
}

// GeminiFileData is a "fileData" value: a file the API fetches (a Files
// API URI).
type GeminiFileData struct {
	// MimeType is the file's media type, when known.
	MimeType string `json:"mimeType,omitempty"`
	// FileURI is the file's URI.
	FileURI string `json:"fileUri"`
}

// GeminiFunctionResponsePart is one entry of a functionResponse's
// "parts" (Gemini 3 models): inline bytes.
type GeminiFunctionResponsePart struct {
	// InlineData holds the bytes.
	InlineData *GeminiBlob `json:"inlineData,omitempty"`
}

// GeminiPartsPlacement says where [GeminiContentsPlaced] puts the parts
// of a tool result (images, documents).
type GeminiPartsPlacement int

const (
	// GeminiPartsInResponse puts them in the functionResponse's own
	// "parts" (multimodal function responses, Gemini 3 models); the
	// default of [GeminiContents].
	GeminiPartsInResponse GeminiPartsPlacement = iota
	// GeminiPartsAfterResponses puts them as inlineData parts of the user
	// turn, after the turn's function responses, where the functionResponse
	// names them: the fallback for models before Gemini 3, which take no
	// parts in a function response.
	GeminiPartsAfterResponses
)

// geminiTakes says what the Gemini formats carry.
const geminiTakes = "PNG, JPEG and WebP images and PDF or plain-text documents as bytes"

// geminiInline reports whether p can be sent as inline bytes.
func geminiInline(p llmtoolkit.Part) bool {
	if p.URL != "" {
		return false
	}
	return p.Kind == llmtoolkit.PartImage && isImageType(p.MediaType, false) ||
		p.Kind == llmtoolkit.PartFile && (p.MediaType == "application/pdf" || p.MediaType == "text/plain")
}

// GeminiUserParts converts a user message's parts: text parts, inline
// bytes, fileData for a URL; a part Gemini does not take becomes a text
// part that names it.
func GeminiUserParts(parts []llmtoolkit.Part) []GeminiPart {
	out := make([]GeminiPart, 0, len(parts))
	for _, p := range parts {
		switch {
		case p.Kind == llmtoolkit.PartText:
			if p.Text != "" {
				out = append(out, GeminiPart{Text: p.Text})
			}
		case p.URL != "":
			out = append(out, GeminiPart{FileData: &GeminiFileData{MimeType: p.MediaType, FileURI: p.URL}})
		case geminiInline(p):
			out = append(out, GeminiPart{InlineData: &GeminiBlob{MimeType: p.MediaType, Data: p.Data}})
		default:
			out = append(out, GeminiPart{Text: partNote(p, "Gemini", geminiTakes)})
		}
	}
	return out
}

// geminiResponseWithParts is the functionResponse part of a result with
// parts, and the parts to send after the turn's responses (placement
// GeminiPartsAfterResponses). Text parts and the notes for parts that
// cannot go join the output text.
func geminiResponseWithParts(r llmtoolkit.Result, placement GeminiPartsPlacement) (GeminiPart, []GeminiPart) {
	texts := []string{r.Content}
	var inline []GeminiFunctionResponsePart
	var after []GeminiPart
	for _, p := range r.Parts {
		switch {
		case p.Kind == llmtoolkit.PartText:
			texts = append(texts, p.Text)
		case geminiInline(p) && placement == GeminiPartsAfterResponses:
			after = append(after, GeminiPart{InlineData: &GeminiBlob{MimeType: p.MediaType, Data: p.Data}})
			texts = append(texts, "["+p.String()+" attached after the function responses]")
		case geminiInline(p):
			inline = append(inline, GeminiFunctionResponsePart{InlineData: &GeminiBlob{MimeType: p.MediaType, Data: p.Data}})
		default:
			texts = append(texts, partNote(p, "a Gemini function response", geminiTakes))
		}
	}
	r.Content, r.Parts = joinText(texts...), nil
	part := GeminiFunctionResponse(r)
	part.FunctionResponse.Parts = inline
	return part, after
}

// streamJSON writes the turn as encoding/json does, its parts' bytes
// encoded straight into s.
func (c GeminiContent) streamJSON(s *jsonStream) {
	s.str("{")
	if c.Role != "" {
		s.str(`"role":`)
		s.quoted(c.Role)
		s.str(",")
	}
	s.str(`"parts":`)
	streamSlice(s, c.Parts)
	s.str("}")
}

// carriesBytes reports whether MarshalJSON writes the part with
// geminiMediaObject: inlineData, or a functionResponse with parts.
func (p GeminiPart) carriesBytes() bool {
	return len(p.Raw) == 0 && p.FunctionCall == nil && p.FileData == nil && !p.Thought &&
		(p.InlineData != nil || p.FunctionResponse != nil && len(p.FunctionResponse.Parts) > 0)
}

// streamJSON writes the part as MarshalJSON does, its bytes encoded
// straight into s.
func (p GeminiPart) streamJSON(s *jsonStream) {
	if !p.carriesBytes() {
		s.marshal(p)
		return
	}
	geminiMediaObject(p).streamJSON(s)
}

// geminiMediaObject is a part that carries bytes (inlineData, or a
// functionResponse with parts) as a JSON object whose bytes are written
// as base64 straight from the part's.
func geminiMediaObject(p GeminiPart) *jsonObject {
	o := &jsonObject{}
	if p.Text != "" {
		o.add("text", p.Text)
	}
	if p.ThoughtSignature != "" {
		o.add("thoughtSignature", p.ThoughtSignature)
	}
	if b := p.InlineData; b != nil {
		o.add("inlineData", (&jsonObject{}).add("mimeType", b.MimeType).add("data", b64Bytes(b.Data)))
	}
	if f := p.FunctionResponse; f != nil {
		r := &jsonObject{}
		if f.ID != "" {
			r.add("id", f.ID)
		}
		r.add("name", f.Name).add("response", f.Response)
		parts := make([]*jsonObject, 0, len(f.Parts))
		for _, fp := range f.Parts {
			e := &jsonObject{}
			if b := fp.InlineData; b != nil {
				e.add("inlineData", (&jsonObject{}).add("mimeType", b.MimeType).add("data", b64Bytes(b.Data)))
			}
			parts = append(parts, e)
		}
		r.add("parts", parts)
		o.add("functionResponse", r)
	}
	return o
}
