package codetools

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/confine"
	"github.com/llmtoolkit/llmtoolkit/internal/fsmode"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

const globDefaultLimit = 1000

func (c *CodeTools) globSpec() toolSpec {
	return makeSpec("glob",
		"Find files by name with a glob pattern and list their paths (relative to the working directory, with \"/\"), newest modification first. "+
			"Patterns use doublestar syntax relative to path: \"*\" matches within one folder level, \"**\" any number of levels, \"?\" one character, \"{a,b}\" alternatives, \"[a-z]\" classes; "+
			"for example \"**/*.go\", \"src/**/*_test.ts\", \"*.{md,txt}\" (a pattern without \"/\" only matches at the top of path: use \"**/\" to search every level). "+
			"Honours .gitignore files, skips .git and does not follow symbolic links. At most `limit` paths (default 1000) are listed, in at most 50 KiB. "+
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
	given := stringArg(args, "pattern", "")
	pattern := strings.TrimPrefix(given, "./")
	pathArg := stringArg(args, "path", ".")
	limit := max(intArg(args, "limit", globDefaultLimit), 1)
	if !doublestar.ValidatePattern(pattern) {
		return "", fmt.Errorf("pattern %q is not a valid glob: use doublestar syntax such as \"**/*.go\", \"src/*.ts\" or \"*.{md,txt}\"", pattern)
	}
	if strings.HasPrefix(pattern, "/") || pattern == ".." || strings.HasPrefix(pattern, "../") {
		return "", fmt.Errorf("pattern %q must be relative to path; put the folder in path instead", pattern)
	}
	start, info, err := c.startPoint(ctx, "path", pathArg)
	if err != nil {
		return "", err
	}
	ctx, ex := bindExclusions(ctx)
	if err := ex.refuseStart("path", pathArg, start); err != nil {
		return "", err
	}
	if !info.IsDir() {
		return "", fmt.Errorf("path %q is a %s, not a folder; give the folder to search in", pathArg, fsmode.Short(info.Mode()))
	}
	prefix := path.Clean(strings.ReplaceAll(start, "\\", "/"))
	if prefix == "." {
		prefix = ""
	}
	// Walk from the pattern's fixed leading folders only.
	match, base, err := splitGlob(given, pattern)
	if err != nil {
		return "", err
	}
	walkFrom, fixed := prefix, prefix // where the walk starts (canonical), and the pattern's folder it is
	if base != "" {
		fixed = path.Join(prefix, base)
		// The pattern's fixed folders are a path like any other: the walk
		// starts at their canonical path (links inside the root followed,
		// a link out refused), and the host's rules decide on that path,
		// as they do for grep's, tree's and list_directory's path.
		canon, err := c.canonical(ctx, "pattern", fixed, true)
		if err != nil {
			if errors.Is(err, ErrOutsideRoot) {
				return "", fmt.Errorf("pattern %q leads outside the working directory through a symbolic link: %w", given, ErrOutsideRoot)
			}
			return c.globAnswer(ctx, pattern, nil, limit) + ex.note(), nil
		}
		canon = path.Clean(filepath.ToSlash(canon))
		if ex.excluded(canon) {
			return c.globAnswer(ctx, pattern, nil, limit) + ex.note(), nil
		}
		bi, err := c.root.Stat(canon)
		if err != nil && confine.IsEscape(err) {
			return "", fmt.Errorf("pattern %q leads outside the working directory through a symbolic link: %w", given, ErrOutsideRoot)
		}
		if err != nil || !bi.IsDir() {
			return c.globAnswer(ctx, pattern, nil, limit) + ex.note(), nil
		}
		walkFrom = canon
	}
	var (
		mu   sync.Mutex
		hits []globHit
	)
	if walkFrom == "" {
		walkFrom = "."
	}
	err = c.walk(ctx, walkFrom, func(_ int, f walk.File) {
		// f.Rel is canonical (the walk follows no link); the pattern
		// matches it as spelled below fixed, the folder the walk is.
		sub := f.Rel
		if walkFrom != "." {
			var ok bool
			if sub, ok = strings.CutPrefix(f.Rel, walkFrom+"/"); !ok {
				return // never: the walk starts inside walkFrom
			}
		}
		rel := sub
		if fixed != "" {
			rel = fixed + "/" + sub
		}
		if prefix != "" {
			rel = strings.TrimPrefix(rel, prefix+"/")
		}
		if ok, _ := doublestar.Match(match, rel); !ok {
			return
		}
		mod, err := f.Dir.ModTime(f.Name)
		if err != nil {
			return
		}
		mu.Lock()
		hits = append(hits, globHit{rel: f.Rel, mod: mod})
		mu.Unlock()
	})
	if err != nil {
		return "", err
	}
	return c.globAnswer(ctx, pattern, hits, limit) + ex.note(), nil
}

// globAnswer sorts the hits newest first (ties by path) and lists at most
// limit of them, in at most grepMaxBytes (the cap grep and glob share).
func (c *CodeTools) globAnswer(ctx context.Context, pattern string, hits []globHit, limit int) string {
	slices.SortFunc(hits, func(a, b globHit) int {
		if k := b.mod.Compare(a.mod); k != 0 {
			return k
		}
		return strings.Compare(a.rel, b.rel)
	})
	maxBytes := c.cfg.grepMaxBytes
	const reserve = 200 // room for the closing notice
	shown := hits[:min(limit, len(hits))]
	paths := make([]string, 0, len(shown))
	size, cutBytes := 0, false
	for _, h := range shown {
		p := shownName(h.rel) // a name cannot forge a line (shown_names.go)
		if size+len(p)+1 > maxBytes-reserve {
			cutBytes = true
			break
		}
		size += len(p) + 1
		paths = append(paths, p)
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayFiles, Payload: FilesPayload{
		Pattern: pattern, Total: len(hits), Shown: len(paths), Paths: paths,
	}})
	if len(hits) == 0 {
		return "No files found matching pattern"
	}
	out := strings.Join(paths, "\n")
	switch {
	case cutBytes:
		out += fmt.Sprintf("\n\n[Output truncated at %s after %d of %d files (newest first). Use a narrower path or a more specific pattern]", textutil.HumanSize(int64(maxBytes)), len(paths), len(hits))
	case len(hits) > limit:
		out += fmt.Sprintf("\n\n[Showing %d of %d files (newest first). Use limit=%d for more, or refine pattern]", limit, len(hits), min(limit*2, len(hits)))
	}
	return out
}

// splitGlob cleans the fixed leading folders of a glob pattern (the part
// before its first wildcard, where "." and ".." are plain path steps) and
// returns the pattern with them cleaned, and those folders ("" for none).
// A pattern whose fixed folders climb above path, or with a ".." after a
// wildcard (which no path below path can match), is an error naming given,
// the pattern as the model wrote it.
func splitGlob(given, pattern string) (clean, base string, err error) {
	base, rest := doublestar.SplitPattern(pattern)
	if base == "." || base == "" {
		base, rest = "", pattern
	} else {
		base = path.Clean(base)
		if base == ".." || strings.HasPrefix(base, "../") {
			return "", "", fmt.Errorf("pattern %q climbs above path with \"..\": patterns match below path; put the folder in path instead", given)
		}
		if base == "." {
			base = ""
		}
	}
	if slices.Contains(strings.Split(rest, "/"), "..") {
		return "", "", fmt.Errorf("pattern %q has \"..\" after a wildcard, which matches nothing: patterns match below path; put the folder in path instead", given)
	}
	if base == "" {
		return rest, "", nil
	}
	return base + "/" + rest, base, nil
}
