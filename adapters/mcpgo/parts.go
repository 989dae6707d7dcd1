package mcpgo

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"path"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// maxPartsBytes bounds the parts of one answer, base64 encoded, as
// package mcp's server does.
const maxPartsBytes = 15 << 20

// partContents converts a result's parts to mcp-go content, in order, as
// package mcp's server does: text as text, an image as image content,
// audio as audio content, any other file as an embedded blob resource
// ("llmtoolkit:part/N/NAME"), a part by URL as a resource link. Parts
// past maxPartsBytes are left out; the notes returned name them.
func partContents(parts []llmtoolkit.Part) (out []mcp.Content, notes []string) {
	budget := maxPartsBytes
	for i, p := range parts {
		size := base64.StdEncoding.EncodedLen(len(p.Data)) + len(p.Text) + len(p.URL)
		if size > budget {
			notes = append(notes, fmt.Sprintf("[%s not sent: one MCP answer carries at most %s of parts]", p, textutil.HumanSize(maxPartsBytes)))
			continue
		}
		budget -= size
		switch {
		case p.Kind == llmtoolkit.PartText:
			out = append(out, mcp.NewTextContent(p.Text))
		case p.URL != "":
			name := p.Name
			if name == "" {
				name = path.Base(p.URL)
			}
			out = append(out, mcp.NewResourceLink(p.URL, name, "", p.MediaType))
		case p.Kind == llmtoolkit.PartImage:
			out = append(out, mcp.NewImageContent(base64.StdEncoding.EncodeToString(p.Data), p.MediaType))
		case strings.HasPrefix(p.MediaType, "audio/"):
			out = append(out, mcp.NewAudioContent(base64.StdEncoding.EncodeToString(p.Data), p.MediaType))
		default:
			name := p.Name
			if name == "" {
				name = "file"
			}
			out = append(out, mcp.NewEmbeddedResource(mcp.BlobResourceContents{
				URI: fmt.Sprintf("llmtoolkit:part/%d/%s", i+1, url.PathEscape(name)), MIMEType: p.MediaType,
				Blob: base64.StdEncoding.EncodeToString(p.Data),
			}))
		}
	}
	return out, notes
}

// contentParts converts a server's image, audio and blob contents to
// parts (an audio part has no name; a blob's name is its URI's last
// element). Content whose base64 does not decode stays a line of the text
// ([contentText]).
func contentParts(contents []mcp.Content) []llmtoolkit.Part {
	var parts []llmtoolkit.Part
	for _, c := range contents {
		if p, ok := contentPart(c); ok {
			parts = append(parts, p)
		}
	}
	return parts
}

// contentPart is c as a part, when it is media whose base64 decodes.
func contentPart(c mcp.Content) (llmtoolkit.Part, bool) {
	switch c := c.(type) {
	case mcp.ImageContent:
		if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
			return llmtoolkit.ImagePart(c.MIMEType, b), true
		}
	case mcp.AudioContent:
		if b, err := base64.StdEncoding.DecodeString(c.Data); err == nil {
			return llmtoolkit.FilePart("", c.MIMEType, b), true
		}
	case mcp.EmbeddedResource:
		if r, ok := c.Resource.(mcp.BlobResourceContents); ok {
			if b, err := base64.StdEncoding.DecodeString(r.Blob); err == nil {
				return llmtoolkit.FilePart(resourceName(r.URI), r.MIMEType, b), true
			}
		}
	}
	return llmtoolkit.Part{}, false
}

// resourceName is the last element of a resource's URI, unescaped.
func resourceName(uri string) string {
	name := uri
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if un, err := url.PathUnescape(name); err == nil {
		name = un
	}
	return name
}
