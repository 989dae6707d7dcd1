package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
)

// NativeMemory is the llmtoolkit.Tool.Native of the memory tool: package
// provider declares it to Anthropic as the built-in memory_20250818.
const NativeMemory = "anthropic/memory_20250818"

// memoriesPrefix is the folder the model names in every memory path.
const memoriesPrefix = "/memories"

// WithMemory adds Anthropic's memory tool, memory (off by default): the
// model keeps notes under /memories, which is folder (relative to the root;
// created on first use). Commands view, create, str_replace and insert run
// as the text editor's; delete removes a file or a folder, rename moves
// one. Every path must start with /memories and is confined to folder: its
// canonical path (links followed) outside folder is refused.
func WithMemory(folder string) Option {
	return func(c *config) { c.memoryDir = filepath.ToSlash(filepath.Clean(folder)) }
}

func (c *CodeTools) memorySpec() toolSpec {
	p := func(d string) map[string]any { return pathProperty(d + " It starts with /memories.") }
	s := makeSpec("memory",
		"Keep notes across conversations in the /memories folder. Commands: view (a file with numbered lines, or a folder), create, str_replace, insert (as the text editor), delete (a file or folder), rename (old_path to new_path).",
		schemaObject(map[string]any{
			"command":     map[string]any{"type": "string", "enum": []string{"view", "create", "str_replace", "insert", "delete", "rename"}},
			"path":        p("The file or folder."),
			"view_range":  map[string]any{"type": "array", "items": map[string]any{"type": "integer"}, "minItems": 2, "maxItems": 2},
			"file_text":   map[string]any{"type": "string"},
			"old_str":     map[string]any{"type": "string"},
			"new_str":     map[string]any{"type": "string"},
			"insert_line": map[string]any{"type": "integer", "minimum": 0},
			"insert_text": map[string]any{"type": "string"},
			"old_path":    p("rename: the file or folder to move."),
			"new_path":    p("rename: its new path."),
		}, "command"),
		llmtoolkit.Annotations{Destructive: true}, c.memory)
	s.tool.Native = NativeMemory
	return s
}

// memoryPath turns a /memories path into the canonical path inside the
// memory folder, refusing one that is not under /memories or that a link
// leads out of the folder.
func (c *CodeTools) memoryPath(ctx context.Context, arg, p string) (string, error) {
	rest, ok := strings.CutPrefix(p, memoriesPrefix)
	if !ok || rest != "" && rest[0] != '/' {
		return "", fmt.Errorf("Error: %s %q is not under %s", arg, p, memoriesPrefix)
	}
	rel := path.Join(c.cfg.memoryDir, path.Clean("/"+rest)) // "..": never above /memories
	canon, err := c.canonical(ctx, arg, rel, false)
	if err != nil {
		return "", err
	}
	canon = filepath.ToSlash(canon)
	if canon != c.cfg.memoryDir && !strings.HasPrefix(canon, c.cfg.memoryDir+"/") {
		return "", fmt.Errorf("Error: %s %q leads out of %s (through a symbolic link)", arg, p, memoriesPrefix)
	}
	return canon, nil
}

// memoryPathFact declares path, and rename's old_path and new_path as
// lists of one path: a permission rule on "path" sees the lists' paths too,
// so one rule on "path" covers both ends of a rename (a deny rule on either
// refuses it; an allow rule must cover both).
func (c *CodeTools) memoryPathFact() *llmtoolkit.PathArguments {
	return &llmtoolkit.PathArguments{
		Names:     []string{"path"},
		Canonical: c.memoryPath,
		Lists:     []string{"old_path", "new_path"},
		List: func(ctx context.Context, name, value string) ([]string, error) {
			p, err := c.memoryPath(ctx, name, value)
			if err != nil {
				return nil, err
			}
			return []string{p}, nil
		},
	}
}

func (c *CodeTools) memory(ctx context.Context, args map[string]any) (string, error) {
	if err := c.root.MkdirAll(filepath.FromSlash(c.cfg.memoryDir), 0o755); err != nil {
		return "", fmt.Errorf("create the memory folder: %w", err)
	}
	cmd := stringArg(args, "command", "")
	if cmd == "rename" {
		from, err := c.memoryPath(ctx, "old_path", stringArg(args, "old_path", ""))
		if err != nil {
			return "", err
		}
		to, err := c.memoryPath(ctx, "new_path", stringArg(args, "new_path", ""))
		if err != nil {
			return "", err
		}
		if from == c.cfg.memoryDir || to == c.cfg.memoryDir {
			return "", errors.New("Error: the /memories folder itself cannot be renamed")
		}
		if _, err := c.root.Lstat(to); err == nil {
			return "", fmt.Errorf("Error: %s already exists", stringArg(args, "new_path", ""))
		}
		if err := c.makeParents(to, to); err != nil {
			return "", err
		}
		if err := c.root.Rename(from, to); err != nil {
			return "", c.conf.FileError(stringArg(args, "old_path", ""), err)
		}
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayMemory, Payload: MemoryPayload{Command: cmd,
			Path: shownName(stringArg(args, "old_path", "")), File: shownPath(from),
			NewPath: shownName(stringArg(args, "new_path", "")), NewFile: shownPath(to)}})
		return fmt.Sprintf("Renamed %s to %s", stringArg(args, "old_path", ""), stringArg(args, "new_path", "")), nil
	}
	p := stringArg(args, "path", "")
	rel, err := c.memoryPath(ctx, "path", p)
	if err != nil {
		return "", err
	}
	if cmd == "delete" {
		if rel == c.cfg.memoryDir {
			return "", errors.New("Error: the /memories folder itself cannot be deleted")
		}
		if _, err := c.root.Lstat(rel); errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("Error: File not found: %s", p)
		}
		if err := c.root.RemoveAll(rel); err != nil {
			return "", c.conf.FileError(p, err)
		}
		llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayMemory, Payload: MemoryPayload{Command: cmd, Path: shownName(p), File: shownPath(rel)}})
		return "Deleted " + p, nil
	}
	inner := make(map[string]any, len(args))
	for k, v := range args {
		inner[k] = v
	}
	inner["path"] = rel
	out, err := c.textEditor(ctx, inner)
	if err != nil {
		return "", errors.New(strings.ReplaceAll(err.Error(), rel, p))
	}
	// The editor showed its diff (an edit) under the real path: the
	// memory Display carries it with both names.
	shown := MemoryPayload{Command: cmd, Path: shownName(p), File: shownPath(rel)}
	if d, ok := llmtoolkit.ShownDisplay(ctx); ok {
		if diff, ok := d.Payload.(DiffPayload); ok {
			shown.Diff, shown.Truncated, shown.Added, shown.Removed = diff.Diff, diff.Truncated, diff.Added, diff.Removed
		}
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayMemory, Payload: shown})
	return strings.ReplaceAll(out, rel, p), nil
}
