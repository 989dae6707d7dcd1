package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/atomicfile"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// newFileMode is the mode of a file the tools create, less the umask.
const newFileMode fs.FileMode = 0o666

// writeTarget confines a write tool's path argument and follows its
// symbolic links inside the root, so that writes replace the file a link
// points to and two names of one file share one lock.
func (c *CodeTools) writeTarget(p string) (string, error) {
	rel, err := c.rel("path", p, false)
	if err != nil {
		return "", err
	}
	real, err := c.resolve("path", p, rel)
	if err != nil {
		return "", err
	}
	if real == "." {
		return "", fmt.Errorf("%s is the working directory itself, not a file", p)
	}
	return real, nil
}

// makeParents creates the folders above rel.
func (c *CodeTools) makeParents(p, rel string) error {
	dir := filepath.Dir(rel)
	if dir == "." {
		return nil
	}
	if err := c.root.MkdirAll(dir, 0o755); err != nil {
		if isEscape(err) {
			return fmt.Errorf("path %q is %w (through a symbolic link)", p, ErrOutsideRoot)
		}
		return fmt.Errorf("create the folders of %s: %w", p, err)
	}
	return nil
}

// loadText reads a file that an edit tool will change: it must exist, be
// a regular text file and not exceed the size limit.
func (c *CodeTools) loadText(p, rel string) (string, fs.FileInfo, error) {
	info, err := c.root.Stat(rel)
	if err != nil {
		return "", nil, fileError(p, err)
	}
	if info.IsDir() {
		return "", nil, fmt.Errorf("%s is a directory, not a file", p)
	}
	if !info.Mode().IsRegular() {
		return "", nil, fmt.Errorf("%s is not a regular file (%v)", p, info.Mode().Type())
	}
	if info.Size() > c.cfg.maxEditBytes {
		return "", nil, fmt.Errorf("%s is %s, larger than the %s that edits load; use bash (sed) or write_file instead",
			p, textutil.HumanSize(info.Size()), textutil.HumanSize(c.cfg.maxEditBytes))
	}
	data, err := c.root.ReadFile(rel)
	if err != nil {
		return "", nil, fileError(p, err)
	}
	if mime, binary := textutil.Sniff(data[:min(len(data), textutil.SniffLen)]); binary {
		return "", nil, fmt.Errorf("%s is a binary file (%s, %s); only text files can be edited",
			p, mime, textutil.HumanSize(int64(len(data))))
	}
	return string(data), info, nil
}

// writeAtomic writes a whole file atomically, keeping an existing file's
// mode.
func (c *CodeTools) writeAtomic(p, rel, content string) error {
	if err := atomicfile.WriteFile(c.root, rel, []byte(content), newFileMode); err != nil {
		if isEscape(errors.Unwrap(err)) || isEscape(err) {
			return fmt.Errorf("path %q is %w (through a symbolic link)", p, ErrOutsideRoot)
		}
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// showDiff attaches a "diff" Display (see textDiff.payload) and returns the
// compact diff.
func (c *CodeTools) showDiff(ctx context.Context, rel, before, after string) string {
	d := newTextDiff(before, after, c.cfg.diffContext)
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "diff", Payload: d.payload(slashPath(rel), c.cfg.diffContext)})
	return d.compact(c.cfg.diffContext, c.cfg.diffMaxLines)
}
