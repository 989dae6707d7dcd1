package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmtoolkit/llmtoolkit/skills"
)

// ErrNoSkills is wrapped by the error of listing the skills of a server
// that does not declare the skills extension ([SkillsExtension]), or of a
// client connected over a transport it cannot send skills/list on (one
// not HTTP, a command, stdio or a line transport).
var ErrNoSkills = errors.New("mcp: the MCP server serves no skills to this client")

// Skills returns the server's skills as a source of a [skills.Loader]
// ([skills.FromRemote], named by the server's name), as MCP's skills
// extension (SEP-2640) defines them: the loader lists them with
// skills/list (every page, at most [WithMaxToolPages] pages and
// [skills.DefaultMaxSkills] skills; past them, or a cursor sent twice, the
// listing fails with [ErrListLimit]) and reads no file. A skill's
// SKILL.md is fetched (resources/read) when the skill is activated, and
// one of its files when it is read; each is verified against the
// listing (size, sha256 digest, and the SKILL.md's frontmatter field by
// field) and refused, unused, on any difference ([skills.ErrIntegrity]).
// The listing is sent over [HTTPTransport], [CommandTransport] and line
// transports (the SDK's client sends no method it does not know: this
// package sends it on the session's connection); on another transport, or
// from a server that does not declare the extension, the listing fails
// with [ErrNoSkills] (one of the loaded set's problems).
func (c *Client) Skills() skills.Source { return skills.FromRemote(c.server, remoteSkills{c}) }

// remoteSkills is a Client as a skills.Remote.
type remoteSkills struct{ c *Client }

// declaresSkills reports whether the server declared the skills extension.
func (c *Client) declaresSkills() bool {
	init := c.session.InitializeResult()
	if init == nil || init.Capabilities == nil {
		return false
	}
	_, ok := init.Capabilities.Extensions[SkillsExtension]
	return ok
}

// ListSkills lists the server's skills, every page, bounded.
func (r remoteSkills) ListSkills(ctx context.Context) ([]skills.Listing, error) {
	c := r.c
	if !c.declaresSkills() {
		return nil, fmt.Errorf("%w: MCP server %q does not declare the %s extension", ErrNoSkills, c.server, SkillsExtension)
	}
	if c.ext == nil {
		return nil, fmt.Errorf("%w: skills/list is sent over HTTP, a command or a line transport only", ErrNoSkills)
	}
	var out []skills.Listing
	seen := map[string]bool{}
	cursor := ""
	for page := 1; ; page++ {
		if page > c.maxPages {
			return nil, fmt.Errorf("%w: MCP server %q sent more than %d pages of skills; raise WithMaxToolPages if it is trusted", ErrListLimit, c.server, c.maxPages)
		}
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		raw, err := c.ext.send(ctx, methodSkillsList, "", params, nil)
		if err != nil {
			return nil, fmt.Errorf("mcp: listing the skills of MCP server %q: %w", c.server, err)
		}
		var res struct {
			Skills []struct {
				URI         string          `json:"uri"`
				Frontmatter map[string]any  `json:"frontmatter"`
				Resources   json.RawMessage `json:"resources"`
			} `json:"skills"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return nil, fmt.Errorf("mcp: the skills/list answer of MCP server %q: %w", c.server, err)
		}
		if len(out)+len(res.Skills) > skills.DefaultMaxSkills {
			return nil, fmt.Errorf("%w: MCP server %q listed more than %d skills", ErrListLimit, c.server, skills.DefaultMaxSkills)
		}
		for _, e := range res.Skills {
			ls := skills.Listing{URI: e.URI, Frontmatter: e.Frontmatter}
			var files []struct {
				URI    string `json:"uri"`
				Digest string `json:"digest"`
				Size   int64  `json:"size"`
			}
			// "dynamic" (no manifest) leaves Files empty: the skill cannot
			// be verified, and the loader refuses it.
			if json.Unmarshal(e.Resources, &files) == nil {
				for _, f := range files {
					ls.Files = append(ls.Files, skills.ListedFile{URI: f.URI, Digest: f.Digest, Size: f.Size})
				}
			}
			out = append(out, ls)
		}
		if res.NextCursor == "" {
			return out, nil
		}
		if seen[res.NextCursor] {
			return nil, fmt.Errorf("%w: MCP server %q sent the skills cursor %.64q a second time (page %d): its pages loop", ErrListLimit, c.server, res.NextCursor, page)
		}
		seen[res.NextCursor] = true
		cursor = res.NextCursor
	}
}

// ReadSkillFile fetches one skill file with resources/read.
func (r remoteSkills) ReadSkillFile(ctx context.Context, uri string, max int64) ([]byte, error) {
	c := r.c
	res, err := c.session.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, fmt.Errorf("mcp: reading %s from MCP server %q: %w", uri, c.server, c.bound.wrap(err))
	}
	for _, rc := range res.Contents {
		if rc == nil || (rc.URI != "" && rc.URI != uri) {
			continue
		}
		data := rc.Blob
		if data == nil {
			data = []byte(rc.Text)
		}
		if int64(len(data)) > max {
			return nil, fmt.Errorf("%w: %s: MCP server %q sent %d bytes, the listing says %d: not used", skills.ErrIntegrity, uri, c.server, len(data), max)
		}
		return data, nil
	}
	return nil, fmt.Errorf("mcp: MCP server %q answered resources/read of %s without its contents", c.server, uri)
}
