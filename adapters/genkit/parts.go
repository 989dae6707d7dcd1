package genkitadapter

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/llmtoolkit/llmtoolkit"
)

// mediaPart converts a genkit media part to a part: a data URL
// ("data:TYPE;base64,...") to its bytes (an image part for an image type,
// a file part otherwise), any other URL to a part by URL. ok is false for
// a data URL that does not decode.
func mediaPart(p *ai.Part) (llmtoolkit.Part, bool) {
	url := p.Text
	if rest, isData := strings.CutPrefix(url, "data:"); isData {
		meta, data, found := strings.Cut(rest, ",")
		mediaType, isB64 := strings.CutSuffix(meta, ";base64")
		if !found || !isB64 {
			return llmtoolkit.Part{}, false
		}
		b, err := base64.StdEncoding.DecodeString(data)
		if err != nil {
			return llmtoolkit.Part{}, false
		}
		if mediaType == "" {
			mediaType = p.ContentType
		}
		if strings.HasPrefix(mediaType, "image/") {
			return llmtoolkit.ImagePart(mediaType, b), true
		}
		return llmtoolkit.FilePart("", mediaType, b), true
	}
	if strings.HasPrefix(p.ContentType, "image/") {
		return llmtoolkit.ImageURLPart(p.ContentType, url), true
	}
	return llmtoolkit.Part{Kind: llmtoolkit.PartFile, MediaType: p.ContentType, URL: url}, true
}

// droppedPartsNote names the parts of a result a genkit tool response
// does not carry.
func droppedPartsNote(parts []llmtoolkit.Part) string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.String()
	}
	return fmt.Sprintf("[not sent: %s: genkitadapter gives genkit the text only]", strings.Join(names, "; "))
}
