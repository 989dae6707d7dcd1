package codetools

import (
	"context"
	"fmt"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textedit"
)

func (c *CodeTools) multiEditSpec() toolSpec {
	edit := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{"oldText", "newText"},
		"properties": map[string]any{
			"oldText": map[string]any{"type": "string", "minLength": 1, "description": "The exact text to replace; it must occur exactly once in the file as the previous edits left it."},
			"newText": map[string]any{"type": "string", "description": "The text to put in its place."},
		},
	}
	return makeSpec("multi_edit",
		"Make several replacements in one file at once. The edits apply in order, each to the result of the previous one, each under edit_file's rules "+
			"(oldText must occur exactly once; exact match first, then a tolerant one). "+
			"If any edit fails, the file is not touched and the error says which edit failed and why; if the edits together leave the file as it was, nothing is written and the error says so, as edit_file does. "+
			"The file is written once, atomically. Returns a diff of all changes. For a single change use edit_file.",
		schemaObject(map[string]any{
			"path":  pathProperty("File to edit, relative to the working directory (an absolute path inside it works too)."),
			"edits": map[string]any{"type": "array", "minItems": 1, "items": edit, "description": "The replacements, applied in order."},
		}, "path", "edits"),
		llmtoolkit.Annotations{Destructive: true}, c.multiEdit)
}

func (c *CodeTools) multiEdit(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	edits, err := editsArg(args)
	if err != nil {
		return "", err
	}
	rel, err := c.writeTarget(ctx, p)
	if err != nil {
		return "", err
	}
	defer c.locks.lock(rel)()
	before, _, err := c.loadText(ctx, p, rel)
	if err != nil {
		return "", err
	}
	after := before
	for i, e := range edits {
		next, _, err := textedit.Apply(after, e[0], e[1])
		if err != nil {
			return "", fmt.Errorf("edit %d of %d failed, nothing was written: %w", i+1, len(edits), editError(ctx, p, after, e[0], err))
		}
		after = next
		if err := ctx.Err(); err != nil {
			return "", err
		}
	}
	if after == before {
		// The edits cancel out: as edit_file does, say so and write nothing.
		return "", editError(ctx, p, before, "", textedit.ErrNoChange)
	}
	if err := c.writeAtomic(p, rel, after); err != nil {
		return "", err
	}
	diff, diags := c.showChange(ctx, "multi_edit", rel, before, after, len(edits))
	noun := "edits"
	if len(edits) == 1 {
		noun = "edit"
	}
	return fmt.Sprintf("Successfully applied %d %s to %s.\n\n%s%s", len(edits), noun, p, diff, diags), nil
}

// editsArg reads the edits argument as (oldText, newText) pairs. The schema
// has checked its shape; Go callers may pass typed slices, which it also
// accepts.
func editsArg(args map[string]any) ([][2]string, error) {
	var out [][2]string
	switch v := args["edits"].(type) {
	case []any:
		for i, item := range v {
			m, ok := item.(map[string]any)
			if !ok {
				return nil, fmt.Errorf("edits[%d] must be an object with oldText and newText", i)
			}
			out = append(out, [2]string{stringArg(m, "oldText", ""), stringArg(m, "newText", "")})
		}
	case []map[string]any:
		for _, m := range v {
			out = append(out, [2]string{stringArg(m, "oldText", ""), stringArg(m, "newText", "")})
		}
	case []map[string]string:
		for _, m := range v {
			out = append(out, [2]string{m["oldText"], m["newText"]})
		}
	default:
		return nil, fmt.Errorf("edits must be an array of {oldText, newText} objects")
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("edits is empty; give at least one {oldText, newText}")
	}
	return out, nil
}
