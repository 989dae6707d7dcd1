package mcp

import (
	"fmt"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkTool converts a tool to its MCP definition. It reports false when the
// parameters are not an object schema, which MCP requires.
func sdkTool(t llmtoolkit.Tool) (*sdk.Tool, bool) {
	params := t.Parameters
	if params == nil {
		params = map[string]any{"type": "object", "properties": map[string]any{}}
	}
	if params["type"] != "object" {
		return nil, false
	}
	st := &sdk.Tool{Name: t.Name, Description: t.Description, InputSchema: params}
	if len(t.SensitiveFields) > 0 {
		st.Meta = sdk.Meta{MetaSensitiveFields: t.SensitiveFields}
	}
	if t.Deferred {
		if st.Meta == nil {
			st.Meta = sdk.Meta{}
		}
		st.Meta[MetaDeferred] = true
	}
	if a := t.Annotations; a != nil {
		st.Annotations = &sdk.ToolAnnotations{
			ReadOnlyHint:    a.ReadOnly,
			DestructiveHint: new(a.Destructive),
			IdempotentHint:  a.Idempotent,
			OpenWorldHint:   new(a.OpenWorld),
		}
	}
	return st, true
}

// fromSDKTool converts a remote MCP tool to an llmtoolkit.Tool, validated
// and with its schema compiled. A missing description is replaced by the
// tool's title or a generic one, since models need one.
//
// Hints the server leaves out take MCP's defaults: destructiveHint is true
// unless the tool is read-only, openWorldHint is true.
//
// A schema whose size with every reference expanded
// ([llmtoolkit.Tool.SchemaNodes]) is above maxSchemaNodes is refused with
// an error wrapping [llmtoolkit.ErrSchemaTooComplex].
func fromSDKTool(st *sdk.Tool, server string, maxSchemaNodes int) (llmtoolkit.Tool, error) {
	t := llmtoolkit.Tool{Name: st.Name, Description: st.Description}
	if strings.TrimSpace(t.Description) == "" {
		t.Description = st.Title
	}
	if strings.TrimSpace(t.Description) == "" && st.Annotations != nil {
		t.Description = st.Annotations.Title
	}
	if strings.TrimSpace(t.Description) == "" {
		t.Description = fmt.Sprintf("Tool %s of the MCP server %s.", st.Name, server)
	}
	switch s := st.InputSchema.(type) {
	case nil:
	case map[string]any:
		t.Parameters = s
	default:
		return llmtoolkit.Tool{}, fmt.Errorf("%w %q: inputSchema must be a JSON object, got %T", llmtoolkit.ErrInvalidTool, st.Name, st.InputSchema)
	}
	if a := st.Annotations; a != nil {
		t.Annotations = &llmtoolkit.Annotations{
			ReadOnly:    a.ReadOnlyHint,
			Destructive: boolOr(a.DestructiveHint, !a.ReadOnlyHint),
			Idempotent:  a.IdempotentHint,
			OpenWorld:   boolOr(a.OpenWorldHint, true),
		}
	}
	if server != "" {
		// toolsearch.MetadataServer: the tool search's server field.
		t.Metadata = map[string]any{"server": server}
	}
	t.SensitiveFields = sensitiveFieldsFrom(st.Meta)
	t.Deferred = st.Meta[MetaDeferred] == true
	t, err := llmtoolkit.NewToolFrom(t)
	if err != nil {
		return llmtoolkit.Tool{}, err
	}
	if err := t.CheckSchemaNodes(maxSchemaNodes); err != nil {
		return llmtoolkit.Tool{}, fmt.Errorf("tool %q of MCP server %q refused: %w", st.Name, server, err)
	}
	return t, nil
}

// MetaSensitiveFields is the key, in a tool's _meta, of the names of its
// sensitive argument fields ([llmtoolkit.Tool.SensitiveFields]): the server
// sends them so that a client's own audit and telemetry (a trace.Recorder
// or an otelkit.Resolver around the [Client]) redact them as the server's
// do; the client puts them on its definitions. They name fields, never
// values.
const MetaSensitiveFields = "io.github.llmtoolkit/sensitiveFields"

// MetaDeferred is the key, in a tool's _meta, of its deferral
// ([llmtoolkit.Tool.Deferred]): true when the server's definition is
// deferred, so that a client's tool search offers it only once found. The
// client reads exactly the boolean true; any other value is not deferred.
const MetaDeferred = "io.github.llmtoolkit/deferred"

// sensitiveFieldsFrom reads the sensitive field names of a tool's _meta:
// a list of strings, the others ignored.
func sensitiveFieldsFrom(meta sdk.Meta) []string {
	list, ok := meta[MetaSensitiveFields].([]any)
	if !ok {
		if names, ok := meta[MetaSensitiveFields].([]string); ok { // in-process
			return slices.Clone(names)
		}
		return nil
	}
	var names []string
	for _, v := range list {
		if n, ok := v.(string); ok && strings.TrimSpace(n) != "" && len(n) <= maxSensitiveName {
			names = append(names, n)
		}
		if len(names) == maxSensitiveFields {
			break
		}
	}
	return names
}

// Bounds on what a server may declare sensitive: a field name is short,
// and a tool has few.
const (
	maxSensitiveFields = 256
	maxSensitiveName   = 1024
)

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// contentText joins a result's contents as text for the model: text as it
// is, links and other kinds described in one bracketed line. Images, audio
// and embedded blobs are not in it: they become parts ([contentParts]).
//
// Image, audio and blob contents are passed as parts; when describeParts
// is set (nothing would keep them) each is a bracket line in its place.
func contentText(contents []sdk.Content, describeParts bool) string {
	parts := make([]string, 0, len(contents))
	for _, c := range contents {
		switch c := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, c.Text)
		case *sdk.ImageContent:
			if describeParts {
				parts = append(parts, fmt.Sprintf("[image: %s, %d bytes]", c.MIMEType, len(c.Data)))
			}
		case *sdk.AudioContent:
			if describeParts {
				parts = append(parts, fmt.Sprintf("[audio: %s, %d bytes]", c.MIMEType, len(c.Data)))
			}
		case *sdk.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource link: %s%s]", c.URI, mimeSuffix(c.MIMEType)))
		case *sdk.EmbeddedResource:
			if c.Resource == nil || c.Resource.Blob == nil || describeParts {
				parts = append(parts, embeddedText(c.Resource))
			}
		case nil:
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n")
}

// embeddedText gives an embedded resource's text, or describes its blob.
func embeddedText(r *sdk.ResourceContents) string {
	switch {
	case r == nil:
		return "[resource]"
	case r.Blob == nil:
		return r.Text
	default:
		return fmt.Sprintf("[resource: %s%s, %d bytes]", r.URI, mimeSuffix(r.MIMEType), len(r.Blob))
	}
}

func mimeSuffix(mime string) string {
	if mime == "" {
		return ""
	}
	return ", " + mime
}

// resultDisplay is the Display of a tools/call result: the one in _meta
// under DisplayMetaKey, else one made of its structured content (see
// displayFrom).
func resultDisplay(res *sdk.CallToolResult) (llmtoolkit.Display, bool) {
	if m, ok := res.Meta[DisplayMetaKey].(map[string]any); ok {
		kind, _ := m["kind"].(string)
		payload, _ := m["payload"].(map[string]any)
		if kind != "" {
			return llmtoolkit.Display{Kind: kind, Payload: payload}, true
		}
	}
	return displayFrom(res.StructuredContent)
}

// displayFrom reads a structuredContent value as a Display when it has the
// shape older versions of this package's server sent: {"kind": string,
// "payload": object}. Any other structured content is kept whole under kind
// "mcp".
func displayFrom(v any) (llmtoolkit.Display, bool) {
	if v == nil {
		return llmtoolkit.Display{}, false
	}
	if m, ok := v.(map[string]any); ok {
		kind, kindOK := m["kind"].(string)
		payload, payloadOK := m["payload"].(map[string]any)
		_, hasPayload := m["payload"]
		if kindOK && kind != "" && len(m) <= 2 && (payloadOK || !hasPayload) {
			return llmtoolkit.Display{Kind: kind, Payload: payload}, true
		}
	}
	return llmtoolkit.Display{Kind: "mcp", Payload: map[string]any{"structuredContent": v}}, true
}
