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
	"unsafe"

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
	col := &grepCollector{limit: limit}
	searchers := make([]fileSearcher, walkWorkers())
	for i := range searchers {
		searchers[i] = fileSearcher{q: q, limit: limit, maxText: c.cfg.grepMaxBytes}
	}
	if !info.IsDir() {
		f, _, err := c.openChecked(pathArg, start, wantFile)
		if err != nil {
			return "", err
		}
		res, err := searchers[0].search(ctx, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("path %q: %w", pathArg, err)
		}
		res.rel = prefix
		col.add(res)
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
			res, err := searchers[w].search(ctx, f)
			f.Close()
			if err == nil && res.matches > 0 {
				res.rel = wf.rel
				col.add(res)
			}
		})
		if err != nil {
			return "", fmt.Errorf("grep stopped before searching every file: %w", err)
		}
	}
	out, err := c.formatGrep(ctx, pattern, col, limit, ctxLines)
	if err != nil {
		return "", err
	}
	return out + ex.note(), nil
}

// grepPiece is what one file shows in the answer: text (all of the file's
// lines, or the first of them where the answer ends; see grepFileResult),
// size bytes in the answer from offset at, after a "--" line when sep; its
// matches are items[item:item+matches].
type grepPiece struct {
	rel      string
	text     string
	at, size int
	sep      bool
	item     int
	matches  int
}

// grepParallelBytes is the size of answer from which formatGrep writes it
// from several goroutines: the answer is fresh memory, and its first
// writes cost more than the copy.
const grepParallelBytes = 1 << 20

// formatGrep writes the answer: matches in path then line order, at most
// limit of them and at most grepMaxBytes in all. The walkers wrote each
// file's lines but for their path (grepFileResult), so the answer is
// planned file by file (only the file where it ends is read line by line),
// then written, the path put before each line and the matches listed for
// the Display as it goes, their text taken from the answer itself. Once
// limit matches are shown, the answer keeps the context lines after the
// last of them (at most ctxLines, in its file) and none of those of the
// matches left out.
func (c *CodeTools) formatGrep(ctx context.Context, pattern string, col *grepCollector, limit, ctxLines int) (string, error) {
	maxBytes := c.cfg.grepMaxBytes
	const reserve = 200 // room for the closing notice
	budget := maxBytes - reserve
	files := col.sorted()
	for i := range files {
		files[i].rel = shownName(files[i].rel) // a name cannot forge a line (shown_names.go)
	}
	pieces := make([]grepPiece, 0, len(files))
	size, shown, cutBytes := 0, 0, false
	for _, f := range files {
		if shown == limit {
			break
		}
		p := grepPiece{rel: f.rel, text: f.text, at: size, sep: ctxLines > 0 && size > 0, item: shown, matches: f.matches}
		sepLen := 0
		if p.sep {
			sepLen = len("--\n")
		}
		p.size = sepLen + len(f.text) + f.lines*len(f.rel)
		if shown+f.matches > limit || size+p.size > budget {
			// the answer ends in this file
			var n int
			p.text, n, p.matches, cutBytes = f.cut(limit-shown, ctxLines, budget-size-sepLen)
			p.size = sepLen + n
		}
		if p.text != "" {
			pieces = append(pieces, p)
			size += p.size
			shown += p.matches
		}
		if p.text != f.text {
			break
		}
	}
	notice := ""
	switch {
	case col.total == 0:
	case cutBytes:
		notice = fmt.Sprintf("\n[Output truncated at %s after %d matches. Use a narrower path or glob, a more specific pattern, or a lower limit]", textutil.HumanSize(int64(maxBytes)), shown)
	case col.total > limit:
		notice = fmt.Sprintf("\n[%d matches limit reached. Use limit=%d for more, or refine pattern]", limit, limit*2)
	}
	if notice != "" && size == 0 {
		notice = "\n" + notice // the notice alone starts after an empty line, as after lines
	}
	buf := make([]byte, size+len(notice))
	copy(buf[size:], notice)
	// The answer is buf's bytes, without a copy (as strings.Builder does
	// it): the matches' texts are substrings of it, taken while buf is
	// written, and nothing reads them, nor writes buf, once it is complete.
	var out string
	if len(buf) > 0 {
		out = unsafe.String(&buf[0], len(buf))
	}
	items := make([]Match, shown)
	parts := max(1, min(walkWorkers(), size/grepParallelBytes))
	if err := grepInParts(pieces, parts, func(ps []grepPiece) {
		for i := range ps {
			ps[i].write(buf, out, items)
		}
	}); err != nil {
		return "", err
	}
	llmtoolkit.Show(ctx, llmtoolkit.Display{Kind: KindMatches, Payload: MatchesPayload{
		Pattern: pattern, Total: col.total, Shown: shown, Items: items,
	}})
	if col.total == 0 {
		return "No matches found", nil
	}
	return strings.TrimSuffix(out, "\n"), nil
}

// cut returns the first lines of f that the answer can still show: up to
// matches matches, the context lines after the last of them (at most
// ctxLines) and at most room bytes of the answer; their size in the
// answer; the number of matches among them; and whether room was what
// stopped it.
func (f *grepFileResult) cut(matches, ctxLines, room int) (text string, size, shown int, cutBytes bool) {
	end, after := 0, 0
	for end < len(f.text) {
		i := strings.IndexByte(f.text[end:], '\n')
		line := f.text[end : end+i+1]
		n := len(line)
		if line != "--\n" {
			n += len(f.rel)
		}
		if shown == matches {
			if line[0] == ':' || line == "--\n" || after == ctxLines {
				break
			}
			after++
		}
		if size+n > room {
			cutBytes = true
			break
		}
		end += len(line)
		size += n
		if line[0] == ':' {
			shown++
		}
	}
	return f.text[:end], size, shown, cutBytes
}

// write puts p in buf at its offset, the path before each line, and its
// matches in items, their text taken from out, the string of buf.
func (p *grepPiece) write(buf []byte, out string, items []Match) {
	at, k := p.at, p.item
	if p.sep {
		at += copy(buf[at:], "--\n")
	}
	for rest := p.text; rest != ""; {
		i := strings.IndexByte(rest, '\n')
		line := rest[:i+1]
		rest = rest[i+1:]
		if line == "--\n" {
			at += copy(buf[at:], line)
			continue
		}
		at += copy(buf[at:], p.rel)
		if line[0] == ':' { // ":N: text\n"
			j := strings.IndexByte(line[1:], ':') + 1
			n, _ := strconv.Atoi(line[1:j])
			items[k] = Match{Path: p.rel, Line: n, Text: out[at+j+2 : at+len(line)-1]}
			k++
		}
		at += copy(buf[at:], line)
	}
}

// grepInParts runs fn on parts runs of pieces that hold about as many
// bytes each, from as many guarded goroutines, and returns the first
// panic among them as an error; with one part, fn runs here.
func grepInParts(pieces []grepPiece, parts int, fn func([]grepPiece)) error {
	if parts <= 1 || len(pieces) < 2 {
		fn(pieces)
		return nil
	}
	total := 0
	for _, p := range pieces {
		total += p.size
	}
	var done []<-chan error
	from, acc := 0, 0
	for i, p := range pieces {
		acc += p.size
		if acc*parts >= total*(len(done)+1) || i == len(pieces)-1 {
			run := pieces[from : i+1]
			done = append(done, goGuarded("grep answer", func() error { fn(run); return nil }))
			from = i + 1
		}
	}
	var first error
	for _, d := range done {
		if err := <-d; err != nil && first == nil {
			first = err
		}
	}
	return first
}
