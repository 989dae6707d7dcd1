package codetools

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/llmtoolkit/llmtoolkit"
)

const globDefaultLimit = 1000

func (c *CodeTools) globSpec() toolSpec {
	return makeSpec("glob",
		"Find files by name with a glob pattern and list their paths (relative to the working directory, with \"/\"), newest modification first. "+
			"Patterns use doublestar syntax relative to path: \"*\" matches within one folder level, \"**\" any number of levels, \"?\" one character, \"{a,b}\" alternatives, \"[a-z]\" classes; "+
			"for example \"**/*.go\", \"src/**/*_test.ts\", \"*.{md,txt}\" (a pattern without \"/\" only matches at the top of path: use \"**/\" to search every level). "+
			"Honours .gitignore files, skips .git and does not follow symbolic links. At most `limit` paths (default 1000) are listed. "+
			"Use glob to find files by name; use grep to search their contents and list_directory or tree to browse a folder.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"pattern": map[string]any{"type": "string", "minLength": 1, "description": "Glob pattern relative to path, e.g. \"**/*.go\" or \"cmd/*/main.go\"."},
				"path":    map[string]any{"type": "string", "description": "Folder to search in, relative to the working directory. Default: \".\"."},
				"limit":   map[string]any{"type": "integer", "minimum": 1, "description": "Maximum number of paths to return. Default: 1000."},
			},
			"required":             []any{"pattern"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.glob)
}

type globHit struct {
	rel string
	mod time.Time
}

func (c *CodeTools) glob(ctx context.Context, args map[string]any) (string, error) {
	pattern := strings.TrimPrefix(stringArg(args, "pattern", ""), "./")
	pathArg := stringArg(args, "path", ".")
	limit := max(intArg(args, "limit", globDefaultLimit), 1)
	if !doublestar.ValidatePattern(pattern) {
		return "", fmt.Errorf("pattern %q is not a valid glob: use doublestar syntax such as \"**/*.go\", \"src/*.ts\" or \"*.{md,txt}\"", pattern)
	}
	if strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") {
		return "", fmt.Errorf("pattern %q must be relative to path; put the folder in path instead", pattern)
	}
	start, info, err := c.startPoint("path", pathArg)
	if err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("path %q is a file, not a folder; give the folder to search in", pathArg)
	}
	prefix := path.Clean(strings.ReplaceAll(start, "\\", "/"))
	if prefix == "." {
		prefix = ""
	}
	// Walk from the pattern's fixed leading folders only.
	walkFrom := start
	if base, _ := doublestar.SplitPattern(pattern); base != "." && base != "" {
		if bi, err := c.root.Stat(path.Join(prefix, base)); err != nil || !bi.IsDir() {
			return c.globAnswer(ctx, pattern, nil, limit), nil
		}
		walkFrom = path.Join(prefix, base)
		if walkFrom == "" {
			walkFrom = "."
		}
	}
	var (
		mu   sync.Mutex
		hits []globHit
	)
	err = c.walk(ctx, walkFrom, func(_ int, f walkFile) {
		rel := f.rel
		if prefix != "" {
			rel = rel[len(prefix)+1:]
		}
		if ok, _ := doublestar.Match(pattern, rel); !ok {
			return
		}
		mod, err := f.dir.modTime(f.name)
		if err != nil {
			return
		}
		mu.Lock()
		hits = append(hits, globHit{rel: f.rel, mod: mod})
		mu.Unlock()
	})
	if err != nil {
		return "", err
	}
	return c.globAnswer(ctx, pattern, hits, limit), nil
}

// globAnswer sorts the hits newest first (ties by path) and lists at most
// limit of them.
func (c *CodeTools) globAnswer(ctx context.Context, pattern string, hits []globHit, limit int) string {
	slices.SortFunc(hits, func(a, b globHit) int {
		if k := b.mod.Compare(a.mod); k != 0 {
			return k
		}
		return strings.Compare(a.rel, b.rel)
	})
	shown := hits[:min(limit, len(hits))]
	paths := make([]string, len(shown))
	for i, h := range shown {
		paths[i] = h.rel
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: "files", Payload: map[string]any{
		"pattern": pattern, "count": len(hits), "items": paths,
	}})
	if len(hits) == 0 {
		return "No files found matching pattern"
	}
	out := strings.Join(paths, "\n")
	if len(hits) > limit {
		out += fmt.Sprintf("\n\n[Showing %d of %d files (newest first). Use limit=%d for more, or refine pattern]", limit, len(hits), min(limit*2, len(hits)))
	}
	return out
}
