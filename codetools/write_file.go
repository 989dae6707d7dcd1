package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

func (c *CodeTools) writeFileSpec() toolSpec {
	return makeSpec("write_file",
		"Write a file: create it, or replace all of its content. Creates missing parent folders. "+
			"The write is atomic (a reader sees the old content or the new one, never a mix) and an existing file keeps its permissions; "+
			"only regular files are replaced (a folder, named pipe, socket or device is refused). "+
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
	rel, err := c.writeTarget(ctx, p)
	if err != nil {
		return "", err
	}
	defer c.locks.lock(rel)()
	before, err := c.replacedText(p, rel)
	if err != nil {
		return "", err
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
	var diags string
	if before != nil {
		_, diags = c.showChange(ctx, "write_file", rel, *before, content, 0)
	} else {
		diags = c.showNewFile(ctx, "write_file", rel, content)
	}
	return fmt.Sprintf("Wrote %d bytes to %s", len(content), p) + diags, nil
}

// replacedText returns the text of the file that write_file is about to
// replace, for the diff: nil when there is none, or when it is too large
// or unreadable (it is then replaced without a diff). A folder, a named
// pipe, a socket or a device is refused: write_file replaces regular files
// only. The file is opened without blocking and checked on the opened
// descriptor, so a pipe renamed over it is never waited on.
func (c *CodeTools) replacedText(p, rel string) (*string, error) {
	f, info, err := c.conf.OpenIn(c.root, p, rel, os.O_RDONLY, 0, confine.Either)
	if err != nil {
		// Why it failed, now that it did: a missing file is a new one, an
		// unreadable regular file is replaced without a diff.
		if info, serr := c.root.Stat(rel); errors.Is(serr, fs.ErrNotExist) || (serr == nil && info.Mode().IsRegular()) {
			return nil, nil
		}
		return nil, err
	}
	defer f.Close()
	if info.IsDir() {
		return nil, fmt.Errorf("%s is a directory; write_file writes files", p)
	}
	if info.Size() > c.cfg.maxEditBytes {
		return nil, nil
	}
	data, err := readUpTo(f, info.Size(), c.cfg.maxEditBytes)
	if err != nil || int64(len(data)) > c.cfg.maxEditBytes {
		return nil, nil
	}
	s := string(data)
	return &s, nil
}
