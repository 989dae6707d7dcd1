package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textedit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// TextEditorName is the name Anthropic gives its text editor tool
// (text_editor_20250728): a model trained on it calls it by this name.
const TextEditorName = "str_replace_based_edit_tool"

// NativeTextEditor is the llmtoolkit.Tool.Native of the text editor tool:
// package provider declares it to Anthropic as the built-in
// text_editor_20250728, and as a function tool to the other providers.
const NativeTextEditor = "anthropic/text_editor_20250728"

// WithTextEditor adds Anthropic's text editor, str_replace_based_edit_tool
// (off by default), over the same engines as read_file, tree, edit_file and
// write_file: commands view (a file's lines numbered, view_range, or a
// folder two levels deep), str_replace (exactly one match, or refused with
// Anthropic's texts), create and insert. maxCharacters caps what view
// shows (<= 0: read_file's byte limit).
func WithTextEditor(maxCharacters int) Option {
	return func(c *config) { c.textEditor, c.textEditorMax = true, maxCharacters }
}

func (c *CodeTools) textEditorSpec() toolSpec {
	s := makeSpec(TextEditorName,
		"View and edit text files. Commands: view (a file with numbered lines, view_range [start, end] with end -1 for the end of the file; or a folder, listed two levels deep), "+
			"str_replace (replace old_str, which must occur exactly once, with new_str), create (a file with file_text), insert (insert_text after line insert_line, 0 for the top). "+
			"Paths are relative to the working directory.",
		schemaObject(map[string]any{
			"command":     map[string]any{"type": "string", "enum": []string{"view", "str_replace", "create", "insert"}, "description": "The command to run."},
			"path":        pathProperty("The file or folder, relative to the working directory (an absolute path inside it works too)."),
			"view_range":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2, "description": "view: the first and last line to show, 1-based; -1 as the last means the end of the file."},
			"old_str":     map[string]any{"type": "string", "description": "str_replace: the exact text to replace."},
			"new_str":     map[string]any{"type": "string", "description": "str_replace: the text to put in its place."},
			"file_text":   map[string]any{"type": "string", "description": "create: the new file's content."},
			"insert_line": map[string]any{"type": "integer", "minimum": 0, "description": "insert: the line after which the text goes (0: the top of the file)."},
			"insert_text": map[string]any{"type": "string", "description": "insert: the text to insert."},
		}, "command", "path"),
		llmtoolkit.Annotations{Destructive: true}, c.textEditor)
	s.tool.Native = NativeTextEditor
	return s
}

func (c *CodeTools) textEditor(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", "")
	switch cmd := stringArg(args, "command", ""); cmd {
	case "view":
		return c.editorView(ctx, p, args["view_range"])
	case "str_replace":
		return c.editorReplace(ctx, p, stringArg(args, "old_str", ""), stringArg(args, "new_str", ""))
	case "create":
		if _, ok := args["file_text"].(string); !ok {
			return "", errors.New("Error: create needs file_text")
		}
		out, err := c.writeFile(ctx, map[string]any{"path": p, "content": args["file_text"]})
		if err != nil {
			return "", err
		}
		// write_file's answer less its first sentence: the diagnostics,
		// with language servers on.
		diags := strings.TrimPrefix(out, fmt.Sprintf("Wrote %d bytes to %s", len(args["file_text"].(string)), p))
		return "File created successfully at: " + p + diags, nil
	case "insert":
		text, ok := args["insert_text"].(string)
		if !ok { // the text editor's earlier versions named it new_str
			text, ok = args["new_str"].(string)
		}
		line, lok := args["insert_line"]
		if !ok || !lok {
			return "", errors.New("Error: insert needs insert_line and insert_text")
		}
		return c.editorInsert(ctx, p, intArg(map[string]any{"n": line}, "n", -1), text)
	default:
		return "", fmt.Errorf("Error: unknown command %q; use view, str_replace, create or insert", cmd)
	}
}

// editorView shows a file's lines, numbered "N: ", or a folder two levels deep.
func (c *CodeTools) editorView(ctx context.Context, p string, viewRange any) (string, error) {
	rel, info, err := c.startPoint(ctx, "path", p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("Error: File not found: %s", p)
		}
		return "", err
	}
	if info.IsDir() {
		if viewRange != nil {
			return "", errors.New("Error: view_range applies to files, not folders")
		}
		listing, err := c.tree(ctx, map[string]any{"path": p, "depth": 2})
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("Here are the files and directories up to 2 levels deep in %s:\n%s", shownPath(rel), listing), nil
	}
	content, _, err := c.loadText(ctx, p, rel)
	if err != nil {
		return "", err
	}
	lines := strings.Split(strings.ReplaceAll(strings.TrimPrefix(content, "\uFEFF"), "\r\n", "\n"), "\n")
	if len(lines) > 1 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	first, last := 1, len(lines)
	if viewRange != nil {
		r, ok := viewRange.([]any)
		if !ok || len(r) != 2 {
			return "", errors.New("Error: view_range must be two integers [start, end]")
		}
		first = intArg(map[string]any{"n": r[0]}, "n", 0)
		last = intArg(map[string]any{"n": r[1]}, "n", 0)
		if last == -1 {
			last = len(lines)
		}
		if first < 1 || first > len(lines) || last < first || last > len(lines) {
			return "", fmt.Errorf("Error: Invalid view_range [%d, %d]: the file has %d lines; start is between 1 and %d, end between start and %d, or -1", first, last, len(lines), len(lines), len(lines))
		}
	}
	limit := c.cfg.textEditorMax
	if limit <= 0 {
		limit = c.cfg.readMaxBytes
	}
	var b strings.Builder
	for i := first; i <= last; i++ {
		fmt.Fprintf(&b, "%d: %s\n", i, lines[i-1])
		if b.Len() > limit {
			break
		}
	}
	out := b.String()
	if len(out) > limit {
		out = textutil.CutUTF8(out, limit) + fmt.Sprintf("\n[truncated at %d characters: use view_range to see more]", limit)
	}
	return strings.TrimSuffix(out, "\n"), nil
}

// editorReplace replaces the one occurrence of oldStr, with Anthropic's
// texts for none and several.
func (c *CodeTools) editorReplace(ctx context.Context, p, oldStr, newStr string) (string, error) {
	rel, before, unlock, err := c.editorLoad(ctx, p)
	if err != nil {
		return "", err
	}
	defer unlock()
	after, _, err := textedit.Apply(before, oldStr, newStr)
	var ae *textedit.AmbiguousError
	switch {
	case errors.As(err, &ae):
		//lint:ignore ST1005 Anthropic's documented text, which its models are trained on
		return "", fmt.Errorf("Error: Found %d matches for replacement text. Please provide more context to make a unique match.", ae.N)
	case errors.Is(err, textedit.ErrNoMatch), errors.Is(err, textedit.ErrEmptyOldText):
		return "", errors.New("Error: No match found for replacement. Please check your text and try again." + textedit.ClosestLines(ctx, before, oldStr))
	case errors.Is(err, textedit.ErrNoChange):
		return "", errors.New("Error: old_str and new_str are the same text; nothing to replace")
	case err != nil:
		return "", err
	}
	if err := c.writeAtomic(p, rel, after); err != nil {
		return "", err
	}
	diff, diags := c.showChange(ctx, "str_replace_based_edit_tool", rel, before, after, 1)
	return "Successfully replaced text at exactly one location.\n\n" + diff + diags, nil
}

// editorInsert inserts text after line n (0: at the top), in the file's
// line endings.
func (c *CodeTools) editorInsert(ctx context.Context, p string, n int, text string) (string, error) {
	rel, before, unlock, err := c.editorLoad(ctx, p)
	if err != nil {
		return "", err
	}
	defer unlock()
	bom := ""
	body := before
	if strings.HasPrefix(body, "\uFEFF") {
		bom, body = "\uFEFF", body[len("\uFEFF"):]
	}
	eol := "\n"
	if strings.Contains(body, "\r\n") {
		eol = "\r\n"
	}
	lines := strings.SplitAfter(body, "\n")
	if lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	if n < 0 || n > len(lines) {
		return "", fmt.Errorf("Error: Invalid insert_line %d: the file has %d lines; give 0 to %d", n, len(lines), len(lines))
	}
	ins := textedit.Styled(before, text)
	if !strings.HasSuffix(ins, "\n") {
		ins += eol
	}
	if n > 0 && !strings.HasSuffix(lines[n-1], "\n") {
		lines[n-1] += eol // the last line had no line break
	}
	after := bom + strings.Join(lines[:n], "") + ins + strings.Join(lines[n:], "")
	if err := c.writeAtomic(p, rel, after); err != nil {
		return "", err
	}
	diff, diags := c.showChange(ctx, "str_replace_based_edit_tool", rel, before, after, 1)
	return fmt.Sprintf("Text inserted at line %d of %s.\n\n%s%s", n, p, diff, diags), nil
}

// editorLoad locks and loads the file a text editor edit changes; a
// missing file is Anthropic's "Error: File not found".
func (c *CodeTools) editorLoad(ctx context.Context, p string) (rel, content string, unlock func(), err error) {
	rel, err = c.writeTarget(ctx, p)
	if err != nil {
		return "", "", nil, err
	}
	unlock = c.locks.lock(rel)
	content, _, err = c.loadText(ctx, p, rel)
	if err != nil {
		unlock()
		if _, serr := c.root.Lstat(rel); errors.Is(serr, fs.ErrNotExist) {
			return "", "", nil, fmt.Errorf("Error: File not found: %s", p)
		}
		return "", "", nil, err
	}
	return rel, content, unlock, nil
}
