package codetools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
)

func (c *CodeTools) listDirectorySpec() toolSpec {
	return makeSpec("list_directory",
		fmt.Sprintf("List the entries of one folder, sorted by name (case-insensitive): folders end with \"/\", "+
			"symbolic links show their target (\"name -> target\"), dotfiles are included. "+
			"At most limit entries (default %d) are listed, with a notice when more exist. "+
			"Use tree to see several levels with sizes at once, glob to find files by name pattern anywhere below a folder.", c.cfg.listLimit),
		schemaObject(map[string]any{
			"path":  pathProperty("Folder to list, relative to the working directory (default \".\", the working directory itself)."),
			"limit": map[string]any{"type": "integer", "minimum": 1, "description": fmt.Sprintf("Maximum number of entries to list (default %d).", c.cfg.listLimit)},
		}),
		llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.listDirectory)
}

func (c *CodeTools) listDirectory(ctx context.Context, args map[string]any) (string, error) {
	p := stringArg(args, "path", ".")
	rel, err := c.canonical(ctx, "path", p, true)
	if err != nil {
		return "", err
	}
	limit := intArg(args, "limit", c.cfg.listLimit)
	if limit <= 0 {
		limit = c.cfg.listLimit
	}
	ctx, ex := bindExclusions(ctx)
	if err := ex.refuseStart("path", p, rel); err != nil {
		return "", err
	}
	entries, err := c.readDir(p, rel)
	if err != nil {
		return "", err
	}
	if ex != nil {
		entries = slices.DeleteFunc(entries, func(e fs.DirEntry) bool {
			return ex.excluded(path.Join(filepath.ToSlash(rel), e.Name()))
		})
	}
	if len(entries) == 0 {
		return "(empty directory)" + ex.note(), nil
	}
	var sb strings.Builder
	for i, e := range entries {
		if i == limit {
			break
		}
		if i > 0 && i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return "", err
			}
		}
		sb.WriteString(c.entryLabel(rel, e))
		sb.WriteByte('\n')
	}
	out := strings.TrimSuffix(sb.String(), "\n")
	if len(entries) > limit {
		out += fmt.Sprintf("\n\n[Showing %d of %d entries (limit=%d). Use limit=%d to see them all, or glob to narrow down.]",
			limit, len(entries), limit, len(entries))
	}
	return out + ex.note(), nil
}

// readDir reads a folder's entries through the root, sorted by name
// case-insensitively. The folder is opened without blocking and its type
// checked on the opened descriptor, so a named pipe is refused, never
// waited on.
func (c *CodeTools) readDir(p, rel string) ([]fs.DirEntry, error) {
	f, _, err := c.conf.Open(p, rel, confine.Dir)
	if err != nil {
		if _, serr := c.root.Stat(rel); errors.Is(serr, fs.ErrNotExist) {
			return nil, fmt.Errorf("path not found: %s", p)
		}
		return nil, err
	}
	defer f.Close()
	entries, err := f.ReadDir(-1)
	if err != nil {
		return nil, c.conf.FileError(p, err)
	}
	sortEntries(entries)
	return entries, nil
}

// sortEntries sorts by name, case-insensitively, then by byte order.
func sortEntries(entries []fs.DirEntry) {
	slices.SortFunc(entries, func(a, b fs.DirEntry) int {
		if c := strings.Compare(strings.ToLower(a.Name()), strings.ToLower(b.Name())); c != 0 {
			return c
		}
		return strings.Compare(a.Name(), b.Name())
	})
}

// entryLabel names an entry: "dir/", "file", "link -> target" (a link to
// a folder inside the root gets its "/" too).
// Names and targets are shown by shownName, so none can forge a line.
func (c *CodeTools) entryLabel(dir string, e fs.DirEntry) string {
	name := shownName(e.Name())
	switch {
	case e.IsDir():
		return name + "/"
	case e.Type()&fs.ModeSymlink != 0:
		rel := filepath.Join(dir, e.Name())
		target, err := c.root.Readlink(rel)
		if err != nil {
			return name + " -> ?"
		}
		if info, err := c.root.Stat(rel); err == nil && info.IsDir() {
			name += "/"
		}
		return name + " -> " + shownName(filepath.ToSlash(target))
	}
	return name
}
