package codetools

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

func (c *CodeTools) appendToFileSpec() toolSpec {
	return makeSpec("append_to_file",
		"Append text to the end of a file, creating the file and its parent folders if they are missing. "+
			"The text is added as it is: include a leading or trailing newline where one is needed. "+
			"Use it to add to logs, notes or lists without reading or repeating the file; use edit_file to insert elsewhere. "+
			"It writes in place, so a file with more than one name (a hard link) is refused: "+
			"write_file and edit_file replace the name instead.",
		schemaObject(map[string]any{
			"path":    pathProperty("File to append to, relative to the working directory (an absolute path inside it works too)."),
			"content": map[string]any{"type": "string", "description": "Text to add at the end of the file."},
		}, "path", "content"),
		llmtoolkit.Annotations{}, c.appendToFile)
}

func (c *CodeTools) appendToFile(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	content := stringArg(args, "content", "")
	rel, err := c.writeTarget(ctx, p)
	if err != nil {
		return "", err
	}
	defer c.locks.lock(rel)()
	if err := c.makeParents(p, rel); err != nil {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	// Open without blocking and check the type on the opened descriptor: a
	// named pipe (with or without a reader), a socket or a device is
	// refused, never written to.
	f, info, err := c.conf.OpenIn(c.root, p, rel, os.O_WRONLY|os.O_APPEND|os.O_CREATE, newFileMode, confine.File)
	if err != nil {
		if info, serr := c.root.Stat(rel); serr == nil && info.IsDir() {
			return "", fmt.Errorf("%s is a directory; append_to_file writes files", p)
		}
		return "", err
	}
	// It writes in place: a file with another name (a hard link, maybe
	// to a file outside the root, planted before) is refused, checked on
	// the opened descriptor. The edit tools replace the name instead.
	if n, ok := confine.LinkCount(info); ok && n > 1 {
		_ = f.Close()
		return "", fmt.Errorf("%s has %d hard links (other names, maybe outside the working directory), so append_to_file, "+
			"which writes in place, refuses it; use write_file or edit_file, which replace this name only", p, n)
	}
	if _, err := f.WriteString(content); err != nil {
		_ = f.Close()
		return "", fmt.Errorf("append to %s: %w", p, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("append to %s: %w", p, err)
	}
	return fmt.Sprintf("Appended %d bytes to %s", len(content), p) + c.diagnoseAppended(ctx, p, rel), nil
}

// diagnoseAppended reports the diagnostics of the file append_to_file
// changed, read back whole (within the edit size), when a language server
// handles it.
func (c *CodeTools) diagnoseAppended(ctx context.Context, p, rel string) string {
	if c.lsp == nil {
		return ""
	}
	c.serversSeeNew([]string{filepath.ToSlash(rel)}) // a file they must not see, made by the append
	if c.cfg.lsp.off["append_to_file"] || !c.lsp.Handles(filepath.Join(c.dir, rel)) {
		return ""
	}
	text, _, err := c.loadText(ctx, p, rel)
	if err != nil {
		return ""
	}
	return c.showNewFile(ctx, "append_to_file", rel, text)
}
