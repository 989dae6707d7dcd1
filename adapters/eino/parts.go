package eino

import (
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/cloudwego/eino/schema"

	"github.com/llmtoolkit/llmtoolkit"
)

// einoPart converts a non-text part of an eino tool's result: an image
// to an image part, audio, video and files to file parts (with no name),
// from their base64 data or, without it, their URL. ok is false for a
// part with neither, or whose base64 does not decode.
func einoPart(p schema.ToolOutputPart) (llmtoolkit.Part, bool) {
	var common *schema.MessagePartCommon
	kind := llmtoolkit.PartFile
	switch {
	case p.Type == schema.ToolPartTypeImage && p.Image != nil:
		common, kind = &p.Image.MessagePartCommon, llmtoolkit.PartImage
	case p.Type == schema.ToolPartTypeAudio && p.Audio != nil:
		common = &p.Audio.MessagePartCommon
	case p.Type == schema.ToolPartTypeVideo && p.Video != nil:
		common = &p.Video.MessagePartCommon
	case p.Type == schema.ToolPartTypeFile && p.File != nil:
		common = &p.File.MessagePartCommon
	default:
		return llmtoolkit.Part{}, false
	}
	switch {
	case common.Base64Data != nil:
		b, err := base64.StdEncoding.DecodeString(*common.Base64Data)
		if err != nil {
			return llmtoolkit.Part{}, false
		}
		return llmtoolkit.Part{Kind: kind, MediaType: common.MIMEType, Data: b}, true
	case common.URL != nil && *common.URL != "":
		return llmtoolkit.Part{Kind: kind, MediaType: common.MIMEType, URL: *common.URL}, true
	}
	return llmtoolkit.Part{}, false
}

// droppedPartsNote names the parts of a result eino's InvokableTool (text
// only) does not carry.
func droppedPartsNote(parts []llmtoolkit.Part) string {
	names := make([]string, len(parts))
	for i, p := range parts {
		names[i] = p.String()
	}
	return fmt.Sprintf("[not sent: %s: the eino adapter gives eino the text only]", strings.Join(names, "; "))
}
