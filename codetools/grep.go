package codetools

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
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

// grepCollector gathers per-file results from the walkers, keeping only the
// files that can still be shown: those first in path order whose matches
// reach the limit. Memory stays bounded by about twice the limit. Until the
// files kept reach the limit they are appended as they come and sorted
// once (by sorted); from then on each is inserted in its place.
type grepCollector struct {
	mu      sync.Mutex
	files   []grepFileResult // in path order once ordered is true
	ordered bool
	kept    int // matches in files
	total   int // matches found, files dropped included
	limit   int
	cutoff  string // once set, files after it in path order cannot be shown
	hasCut  bool
}

func (g *grepCollector) add(r grepFileResult) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total += r.matches
	if g.hasCut && r.rel > g.cutoff {
		return
	}
	g.kept += r.matches
	if !g.ordered {
		g.files = append(g.files, r)
		if g.kept < g.limit {
			return
		}
		g.order()
	} else {
		i := sort.Search(len(g.files), func(i int) bool { return g.files[i].rel >= r.rel })
		g.files = append(g.files, grepFileResult{})
		copy(g.files[i+1:], g.files[i:])
		g.files[i] = r
	}
	// drop the last files while the others hold more than the limit
	for len(g.files) > 1 && g.kept-g.files[len(g.files)-1].matches >= g.limit {
		g.kept -= g.files[len(g.files)-1].matches
		g.files = g.files[:len(g.files)-1]
	}
	g.cutoff, g.hasCut = g.files[len(g.files)-1].rel, true
}

// order sorts the files by path, once.
func (g *grepCollector) order() {
	if !g.ordered {
		slices.SortFunc(g.files, func(a, b grepFileResult) int { return strings.Compare(a.rel, b.rel) })
		g.ordered = true
	}
}

// sorted returns the files kept, in path order. Call it once the walk is
// over.
func (g *grepCollector) sorted() []grepFileResult {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.order()
	return g.files
}

// skip reports whether a file cannot be shown any more.
func (g *grepCollector) skip(rel string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.hasCut && rel > g.cutoff
}

func (c *CodeTools) grep(ctx context.Context, args map[string]any) (string, error) {
	pattern := stringArg(args, "pattern", "")
	pathArg := stringArg(args, "path", ".")
	globArg := stringArg(args, "glob", "")
	limit := max(intArg(args, "limit", grepDefaultLimit), 1)
	ctxLines := min(max(intArg(args, "context", 0), 0), 20)
	q, err := newGrepQuery(pattern, boolArg(args, "literal", false), boolArg(args, "ignoreCase", false), ctxLines)
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
	start, info, err := c.startPoint("path", pathArg)
	if err != nil {
		return "", err
	}
	prefix := path.Clean(strings.ReplaceAll(start, "\\", "/"))
	if prefix == "." {
		prefix = ""
	}
	col := &grepCollector{limit: limit}
	searchers := make([]fileSearcher, walkWorkers())
	for i := range searchers {
		searchers[i] = fileSearcher{q: q, limit: limit, maxText: c.cfg.part2.grepMaxBytes}
	}
	if !info.IsDir() {
		f, _, err := c.openChecked(pathArg, start, wantFile)
		if err != nil {
			return "", err
		}
		text, n, err := searchers[0].search(ctx, prefix, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("path %q: %w", pathArg, err)
		}
		col.add(grepFileResult{rel: prefix, text: text, matches: n})
	} else {
		err = c.walk(ctx, start, func(w int, wf walkFile) {
			if globArg != "" {
				rel := wf.rel
				if prefix != "" {
					rel = rel[len(prefix)+1:]
				}
				if ok, _ := doublestar.Match(globArg, rel); !ok {
					return
				}
			}
			if col.skip(wf.rel) {
				return
			}
			f, err := wf.dir.open(wf.name)
			if err != nil {
				return
			}
			text, n, err := searchers[w].search(ctx, wf.rel, f)
			f.Close()
			if err == nil && n > 0 {
				col.add(grepFileResult{rel: wf.rel, text: text, matches: n})
			}
		})
		if err != nil {
			return "", fmt.Errorf("grep stopped before searching every file: %w", err)
		}
	}
	return c.formatGrep(ctx, pattern, col, limit, ctxLines), nil
}

// formatGrep writes the answer: matches in path then line order, at most
// limit of them and at most grepMaxBytes in all. The walkers wrote each
// file's lines (grepFileResult.text); a file that fits whole is copied in
// one step, and only the file where the answer ends is read line by line.
// Once limit matches are shown, the answer keeps the context lines after
// the last of them (at most ctxLines, in its file) and none of those of the
// matches left out.
func (c *CodeTools) formatGrep(ctx context.Context, pattern string, col *grepCollector, limit, ctxLines int) string {
	withContext := ctxLines > 0
	maxBytes := c.cfg.part2.grepMaxBytes
	const reserve = 200 // room for the closing notice
	budget := maxBytes - reserve
	files := col.sorted()
	size := 0
	for _, f := range files {
		size += len(f.text) + 3
	}
	var b strings.Builder
	b.Grow(max(min(size, budget), 0) + reserve)
	// where each file's lines went in the answer, to list the matches
	type placed struct {
		rel        string
		start, end int
	}
	spans := make([]placed, 0, len(files))
	shown, cutBytes := 0, false
	for _, f := range files {
		if shown == limit {
			break
		}
		sep := withContext && b.Len() > 0
		need := len(f.text)
		if sep {
			need += 3
		}
		if shown+f.matches <= limit && b.Len()+need <= budget {
			if sep {
				b.WriteString("--\n")
			}
			spans = append(spans, placed{f.rel, b.Len(), b.Len() + len(f.text)})
			b.WriteString(f.text)
			shown += f.matches
			continue
		}
		// the answer ends in this file: line by line
		start, after := -1, 0
		for rest := f.text; rest != ""; {
			i := strings.IndexByte(rest, '\n')
			line := rest[:i+1]
			rest = rest[i+1:]
			match := line != "--\n" && line[len(f.rel)] == ':'
			if shown == limit {
				if match || line == "--\n" || after == ctxLines {
					break
				}
				after++
			}
			n := len(line)
			if sep {
				n += 3
			}
			if b.Len()+n > budget {
				cutBytes = true
				break
			}
			if sep {
				b.WriteString("--\n")
				sep = false
			}
			if start < 0 {
				start = b.Len()
			}
			b.WriteString(line)
			if match {
				shown++
			}
		}
		if start >= 0 {
			spans = append(spans, placed{f.rel, start, b.Len()})
		}
		break
	}
	if col.total > 0 && (cutBytes || col.total > limit) && b.Len() == 0 {
		b.WriteByte('\n') // the notice alone starts after an empty line, as after lines
	}
	switch {
	case col.total == 0:
	case cutBytes:
		fmt.Fprintf(&b, "\n[Output truncated at %s after %d matches. Use a narrower path or glob, a more specific pattern, or a lower limit]", textutil.HumanSize(int64(maxBytes)), shown)
	case col.total > limit:
		fmt.Fprintf(&b, "\n[%d matches limit reached. Use limit=%d for more, or refine pattern]", limit, limit*2)
	}
	out := b.String()
	// The matches for the Display: their text is the answer's own.
	items := make([]Match, 0, shown)
	for _, sp := range spans {
		for rest, at := out[sp.start:sp.end], sp.start; rest != ""; {
			i := strings.IndexByte(rest, '\n')
			line := rest[:i]
			rest, at = rest[i+1:], at+i+1
			if line == "--" || line[len(sp.rel)] != ':' {
				continue
			}
			num := line[len(sp.rel)+1:]
			k := strings.IndexByte(num, ':')
			n, _ := strconv.Atoi(num[:k])
			items = append(items, Match{Path: sp.rel, Line: n, Text: num[k+2:]})
		}
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: KindMatches, Payload: MatchesPayload{
		Pattern: pattern, Total: col.total, Shown: shown, Items: items,
	}})
	if col.total == 0 {
		return "No matches found"
	}
	return strings.TrimSuffix(out, "\n")
}
