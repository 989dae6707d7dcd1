package mcp

import (
	"context"
	"encoding/base64"
	"fmt"
	"log/slog"
	"net/url"
	"path"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// maxAnswerBytes bounds one tool answer's text, Display and parts, as
// encoded, below the Go SDK's 16 MiB line: the parts get what the text and
// the Display left of it.
const maxAnswerBytes = 15 << 20

// partURIPrefix starts the URI of an embedded resource made of a file
// part that has no URL of its own: "llmtoolkit:part/N/NAME".
const partURIPrefix = "llmtoolkit:part/"

// partContents converts a result's parts to MCP content, in order, while
// their encoded size fits in budget bytes: text as text, an image as image
// content, audio as audio content, any other file as an embedded resource
// with its bytes (blob); an image or a file by URL as a resource link. A
// part that does not fit is left out, and the notes returned say so.
func partContents(parts []llmtoolkit.Part, budget int) (out []sdk.Content, notes []string) {
	for i, p := range parts {
		size := encodedPartSize(p)
		if size > budget {
			notes = append(notes, fmt.Sprintf("[%s not sent: one MCP answer carries at most %s]", p, textutil.HumanSize(maxAnswerBytes)))
			continue
		}
		budget -= size
		switch {
		case p.Kind == llmtoolkit.PartText:
			out = append(out, &sdk.TextContent{Text: p.Text})
		case p.URL != "":
			out = append(out, &sdk.ResourceLink{URI: p.URL, Name: orDefault(p.Name, path.Base(p.URL)), MIMEType: p.MediaType})
		case p.Kind == llmtoolkit.PartImage:
			out = append(out, &sdk.ImageContent{Data: p.Data, MIMEType: p.MediaType})
		case strings.HasPrefix(p.MediaType, "audio/"):
			out = append(out, &sdk.AudioContent{Data: p.Data, MIMEType: p.MediaType})
		default:
			uri := fmt.Sprintf("%s%d/%s", partURIPrefix, i+1, url.PathEscape(orDefault(p.Name, "file")))
			out = append(out, &sdk.EmbeddedResource{Resource: &sdk.ResourceContents{URI: uri, MIMEType: p.MediaType, Blob: p.Data}})
		}
	}
	return out, notes
}

// encodedPartSize is about what a part takes in an MCP message: its
// bytes in base64, its text and URL as they are, and an envelope.
func encodedPartSize(p llmtoolkit.Part) int {
	return base64.StdEncoding.EncodedLen(len(p.Data)) + len(p.Text) + len(p.URL) + len(p.Name) + len(p.MediaType) + 128
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// contentParts converts what a server answered beside its text to parts:
// images, audio (a file part) and embedded resources with bytes (a file
// part named after the resource's URI). Text, links and text resources
// stay in the text ([contentText]).
func contentParts(contents []sdk.Content) []llmtoolkit.Part {
	var parts []llmtoolkit.Part
	for _, c := range contents {
		switch c := c.(type) {
		case *sdk.ImageContent:
			parts = append(parts, llmtoolkit.ImagePart(c.MIMEType, c.Data))
		case *sdk.AudioContent:
			parts = append(parts, llmtoolkit.FilePart("", c.MIMEType, c.Data))
		case *sdk.EmbeddedResource:
			if r := c.Resource; r != nil && r.Blob != nil {
				parts = append(parts, llmtoolkit.FilePart(resourceName(r.URI), r.MIMEType, r.Blob))
			}
		}
	}
	return parts
}

// resourceName is the last element of a resource's URI.
func resourceName(uri string) string {
	name := uri
	if u, err := url.Parse(uri); err == nil && u.Path != "" {
		name = u.Path
	} else if err == nil && u.Opaque != "" {
		name = u.Opaque
	}
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if un, err := url.PathUnescape(name); err == nil {
		name = un
	}
	return name
}

// addParts appends a result's parts to out's content, in what the text and
// the Display (used bytes) left of maxAnswerBytes; the parts left out are
// named in a last text content and logged.
func addParts(ctx context.Context, log *slog.Logger, tool string, out *sdk.CallToolResult, parts []llmtoolkit.Part, used int) {
	if len(parts) == 0 {
		return
	}
	contents, notes := partContents(parts, maxAnswerBytes-used)
	out.Content = append(out.Content, contents...)
	if len(notes) > 0 {
		out.Content = append(out.Content, &sdk.TextContent{Text: strings.Join(notes, "\n")})
		log.WarnContext(ctx, "mcp: parts of a tool answer left out to fit in one MCP message",
			slog.String("tool", tool), slog.Int("left out", len(notes)))
	}
}
