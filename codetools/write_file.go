package codetools

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
)

func (c *CodeTools) writeFileSpec() toolSpec {
	return makeSpec("write_file",
		"Write a file: create it, or replace all of its content. Creates missing parent folders. "+
			"The write is atomic (a reader sees the old content or the new one, never a mix) and an existing file keeps its permissions. "+
			"To change part of an existing file prefer edit_file or multi_edit, which need not repeat the rest; to add at the end use append_to_file.",
		schemaObject(map[string]any{
			"path":    pathProperty("File to write, relative to the working directory (an absolute path inside it works too)."),
			"content": map[string]any{"type": "string", "description": "The file's complete new content."},
		}, "path", "content"),
		llmtoolkit.Annotations{Destructive: true, Idempotent: true}, c.writeFile)
}

func (c *CodeTools) writeFile(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	content := stringArg(args, "content", "")
	rel, err := c.writeTarget(p)
	if err != nil {
		return "", err
	}
	defer c.locks.lock(rel)()
	var before *string
	if info, err := c.root.Stat(rel); err == nil {
		if info.IsDir() {
			return "", fmt.Errorf("%s is a directory; write_file writes files", p)
		}
		if info.Mode().IsRegular() && info.Size() <= c.cfg.maxEditBytes {
			if data, err := c.root.ReadFile(rel); err == nil {
				s := string(data)
				before = &s
			}
		}
	}
	if err := c.makeParents(p, rel); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := c.writeAtomic(p, rel, content); err != nil {
		return "", err
	}
	if before != nil {
		c.showDiff(ctx, rel, *before, content)
	}
	return fmt.Sprintf("Wrote %d bytes to %s", len(content), p), nil
}
