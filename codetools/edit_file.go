package codetools

import (
	"context"
	"errors"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textedit"
)

func (c *CodeTools) editFileSpec() toolSpec {
	return makeSpec("edit_file",
		"Replace one piece of text in a file. oldText must appear exactly once in the file; it is replaced by newText and every other byte stays as it was. "+
			"Copy oldText exactly from the file (read_file first), including whitespace and line breaks, with enough surrounding lines to make it unique. "+
			"If there is no exact match, a tolerant match is tried that ignores trailing spaces, Unicode quote, dash and space variants. "+
			"The file's line endings (LF or CRLF) and byte order mark are kept. "+
			"Returns a diff of the change. For several changes to one file use multi_edit; to replace the whole file use write_file.",
		schemaObject(map[string]any{
			"path":    pathProperty("File to edit, relative to the working directory (an absolute path inside it works too)."),
			"oldText": map[string]any{"type": "string", "minLength": 1, "description": "The exact text to replace; it must occur exactly once in the file."},
			"newText": map[string]any{"type": "string", "description": "The text to put in its place (may be empty to delete oldText)."},
		}, "path", "oldText", "newText"),
		llmtoolkit.Annotations{Destructive: true}, c.editFile)
}

func (c *CodeTools) editFile(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	oldText, newText := stringArg(args, "oldText", ""), stringArg(args, "newText", "")
	rel, err := c.writeTarget(ctx, p)
	if err != nil {
		return "", err
	}
	defer c.locks.lock(rel)()
	before, _, err := c.loadText(ctx, p, rel)
	if err != nil {
		return "", err
	}
	after, m, err := textedit.Apply(before, oldText, newText)
	if err != nil {
		return "", editError(ctx, p, before, oldText, err)
	}
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := c.writeAtomic(p, rel, after); err != nil {
		return "", err
	}
	diff, diags := c.showChange(ctx, "edit_file", rel, before, after, 1)
	msg := fmt.Sprintf("Successfully replaced text in %s.", p)
	if m.Tolerant {
		msg += " (oldText matched once Unicode quotes, dashes, spaces and trailing whitespace were normalised.)"
	}
	return msg + "\n\n" + diff + diags, nil
}

// editError turns an error of the matching engine into the message the
// model sees.
func editError(ctx context.Context, p, content, oldText string, err error) error {
	var ae *textedit.AmbiguousError
	switch {
	case errors.As(err, &ae):
		return fmt.Errorf("found %d occurrences of the text in %s: the text must be unique; provide more context to make it unique", ae.N, p)
	case errors.Is(err, textedit.ErrNoMatch):
		return errors.New(fmt.Sprintf("could not find the exact text in %s: the old text must match exactly, including all whitespace and newlines", p) +
			textedit.ClosestLines(ctx, content, oldText))
	case errors.Is(err, textedit.ErrNoChange):
		return fmt.Errorf("no changes made to %s: the replacement produced identical content", p)
	case errors.Is(err, textedit.ErrEmptyOldText):
		return errors.New("oldText is empty; give the exact text to replace, with a neighbouring line if you want to insert (or use append_to_file or write_file)")
	}
	return err
}
