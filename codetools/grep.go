package codetools

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/search"
	"github.com/llmtoolkit/llmtoolkit/internal/walk"
)

const grepDefaultLimit = 100

func (c *CodeTools) grepSpec() toolSpec {
	return makeSpec("grep",
		"Search file contents for a pattern and return the matching lines as `path:N: text` (context lines as `path-N- text`, `--` between groups), ordered by path then line. "+
			"The pattern is a Go RE2 regular expression (no look-around or backreferences), or plain text with literal=true; it matches within one line, like ripgrep: [^x], \\s and the like never match a line break, and a pattern holding a line break is refused. "+
			"Searches a file or, recursively, a folder: honours .gitignore files, skips .git, searches hidden files, skips binary files and never follows symbolic links. "+
			"Lines are cut at 500 characters and the answer at 50 KiB; at most `limit` matches (default 100) are shown. "+
			"Use grep to find where something is written; use glob to find files by name, and read_file to read a file.",
		map[string]any{
			"type": "object",
			"properties": map[string]any{
				"pattern":    map[string]any{"type": "string", "minLength": 1, "description": "Regular expression (Go RE2 syntax), or plain text when literal is true."},
				"path":       map[string]any{"type": "string", "description": "File or folder to search, relative to the working directory. Default: \".\" (everything)."},
				"glob":       map[string]any{"type": "string", "description": "Only search files whose path (relative to path) matches this glob, e.g. \"*.go\", \"**/*.ts\", \"*.{js,ts}\". A pattern without \"/\" matches file names at any depth."},
				"ignoreCase": map[string]any{"type": "boolean", "description": "Match regardless of letter case. Default: false."},
				"literal":    map[string]any{"type": "boolean", "description": "Treat pattern as plain text, not a regular expression. Default: false."},
				"context":    map[string]any{"type": "integer", "minimum": 0, "maximum": 20, "description": "Lines of context to show before and after each match. Default: 0."},
				"limit":      map[string]any{"type": "integer", "minimum": 1, "description": "Maximum number of matches to return. Default: 100."},
			},
			"required":             []any{"pattern"},
			"additionalProperties": false,
		}, llmtoolkit.Annotations{ReadOnly: true, Idempotent: true}, c.grep)
}

func (c *CodeTools) grep(ctx context.Context, args map[string]any) (string, error) {
	pattern := stringArg(args, "pattern", "")
	pathArg := stringArg(args, "path", ".")
	globArg := stringArg(args, "glob", "")
	limit := max(intArg(args, "limit", grepDefaultLimit), 1)
	ctxLines := min(max(intArg(args, "context", 0), 0), 20)
	q, err := search.Compile(pattern, boolArg(args, "literal", false), boolArg(args, "ignoreCase", false), ctxLines)
	if err != nil {
		return "", err
	}
	if globArg != "" {
		if !doublestar.ValidatePattern(globArg) {
			return "", fmt.Errorf("glob %q is not a valid pattern: use doublestar syntax such as \"*.go\", \"**/*.ts\" or \"*.{js,ts}\"", globArg)
		}
		if !strings.Contains(globArg, "/") {
			globArg = "**/" + globArg
		}
	}
	start, info, err := c.startPoint(ctx, "path", pathArg)
	if err != nil {
		return "", err
	}
	ctx, ex := bindExclusions(ctx)
	if err := ex.refuseStart("path", pathArg, start); err != nil {
		return "", err
	}
	prefix := path.Clean(strings.ReplaceAll(start, "\\", "/"))
	if prefix == "." {
		prefix = ""
	}
	col := search.NewCollector(limit)
	searchers := make([]*search.Searcher, walk.Workers())
	for i := range searchers {
		searchers[i] = search.NewSearcher(q, limit, c.cfg.grepMaxBytes)
	}
	if !info.IsDir() {
		f, _, err := c.openContents(ctx, pathArg, start)
		if err != nil {
			return "", err
		}
		res, err := searchers[0].Search(ctx, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("path %q: %w", pathArg, err)
		}
		col.Add(prefix, res)
	} else {
		err = c.walk(ctx, start, func(w int, wf walk.File) {
			if globArg != "" {
				rel := wf.Rel
				if prefix != "" {
					rel = rel[len(prefix)+1:]
				}
				if ok, _ := doublestar.Match(globArg, rel); !ok {
					return
				}
			}
			if col.Skip(wf.Rel) {
				return
			}
			f, err := ex.openWalked(wf)
			if err != nil {
				return
			}
			res, err := searchers[w].Search(ctx, f)
			f.Close()
			if err == nil && res.Matches() > 0 {
				col.Add(wf.Rel, res)
			}
		})
		if err != nil {
			return "", fmt.Errorf("grep stopped before searching every file: %w", err)
		}
	}
	out, err := c.formatGrep(ctx, pattern, col, ctxLines)
	if err != nil {
		return "", err
	}
	return out + ex.note(), nil
}

// formatGrep writes the answer (search.Write owns its format) and shows
// the matches it lists in the Display.
func (c *CodeTools) formatGrep(ctx context.Context, pattern string, col *search.Collector, ctxLines int) (string, error) {
	a, err := search.Write(col, search.Options[Match]{
		MaxBytes: c.cfg.grepMaxBytes,
		Context:  ctxLines,
		Name:     shownName, // a name cannot forge a line (shown_names.go)
		Item:     func(path string, line int, text string) Match { return Match{Path: path, Line: line, Text: text} },
		Parts:    walk.Workers(),
		Go:       goGuarded,
	})
	if err != nil {
		return "", err
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: DisplayMatches, Payload: MatchesPayload{
		Pattern: pattern, Total: a.Total, Shown: len(a.Items), Items: a.Items,
	}})
	return a.Text, nil
}
