package codetools

// What the tools that change files share: creating the folders above a new
// file, loading the text an edit changes, writing a file back atomically,
// and showing the change as a diff.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path/filepath"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/atomicfile"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// newFileMode is the mode of a file the tools create, less the umask.
const newFileMode fs.FileMode = 0o666

// makeParents creates the folders above rel.
func (c *CodeTools) makeParents(p, rel string) error {
	dir := filepath.Dir(rel)
	if dir == "." {
		return nil
	}
	if err := c.root.MkdirAll(dir, 0o755); err != nil {
		if confine.IsEscape(err) {
			return c.conf.OutsideError(p)
		}
		return fmt.Errorf("create the folders of %s: %w", p, err)
	}
	return nil
}

// loadText reads a file that an edit tool will change: it must exist, be
// a regular text file and not exceed the size limit. It is opened without
// blocking and checked on the opened descriptor, so a named pipe or a
// device is refused, never read, and so is a file with other names while
// the host's deny rules are in force (checkOneName).
func (c *CodeTools) loadText(ctx context.Context, p, rel string) (string, fs.FileInfo, error) {
	f, info, err := c.openContents(ctx, p, rel)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	tooLarge := func(size int64) error {
		return fmt.Errorf("%s is %s, larger than the %s that edits load; use bash (sed) or write_file instead",
			p, textutil.HumanSize(size), textutil.HumanSize(c.cfg.maxEditBytes))
	}
	if info.Size() > c.cfg.maxEditBytes {
		return "", nil, tooLarge(info.Size())
	}
	data, err := readUpTo(f, info.Size(), c.cfg.maxEditBytes)
	if err != nil {
		return "", nil, c.conf.FileError(p, err)
	}
	if int64(len(data)) > c.cfg.maxEditBytes { // it grew since the open
		return "", nil, tooLarge(int64(len(data)))
	}
	if mime, binary := sniffMIME(data[:min(len(data), textutil.SniffLen)]); binary {
		return "", nil, fmt.Errorf("%s is a binary file (%s, %s); only text files can be edited",
			p, mime, textutil.HumanSize(int64(len(data))))
	}
	return string(data), info, nil
}

// readUpTo reads f, whose size was size when it was opened, to its end or
// to limit+1 bytes, whichever comes first: a file that grows is never read
// past what the caller can tell is too much.
func readUpTo(f io.Reader, size, limit int64) ([]byte, error) {
	buf := bytes.NewBuffer(make([]byte, 0, min(size, limit)+bytes.MinRead))
	_, err := buf.ReadFrom(io.LimitReader(f, limit+1))
	return buf.Bytes(), err
}

// writeAtomic writes a whole file atomically, keeping an existing file's
// mode.
func (c *CodeTools) writeAtomic(p, rel, content string) error {
	return c.writeAtomicMode(p, rel, content, newFileMode)
}

// writeAtomicMode is writeAtomic with the mode of a new file.
func (c *CodeTools) writeAtomicMode(p, rel, content string, perm fs.FileMode) error {
	if err := atomicfile.WriteFile(c.root, rel, []byte(content), perm); err != nil {
		if confine.IsEscape(errors.Unwrap(err)) || confine.IsEscape(err) {
			return c.conf.OutsideError(p)
		}
		if errors.Is(err, atomicfile.ErrNotRegular) {
			return fmt.Errorf("write %s refused: %w", p, err)
		}
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// showDiffWith attaches a "diff" Display (see textDiff.payload), saying how
// many replacements were made, and returns the compact diff.
func (c *CodeTools) showDiffWith(ctx context.Context, rel, before, after string, replacements int, diags *DiagnosticsPayload) string {
	d := newTextDiff(before, after, c.cfg.diffContext)
	p := d.payload(shownPath(rel), c.cfg.diffContext)
	p.Replacements = replacements
	p.Diagnostics = diags
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayDiff, Payload: p})
	return d.compact(c.cfg.diffContext, c.cfg.diffMaxLines)
}

// showChange is showDiff after a change tool made: the file's language
// server, when one runs (WithLanguageServers), is told of it, and its
// diagnostics go on the Display; it returns the compact diff and the
// diagnostics' lines for the answer ("" without).
func (c *CodeTools) showChange(ctx context.Context, tool, rel, before, after string, replacements int) (string, string) {
	diags, lines := c.afterChange(ctx, tool, rel, after)
	return c.showDiffWith(ctx, rel, before, after, replacements, diags), lines
}

// showNewFile is showChange for a change without a diff (a new file, an
// append): the diagnostics, when there are, as a "diagnostics" Display.
func (c *CodeTools) showNewFile(ctx context.Context, tool, rel, after string) string {
	diags, lines := c.afterChange(ctx, tool, rel, after)
	if diags != nil {
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayDiagnostics, Payload: *diags})
	}
	return lines
}
