package search

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Collector gathers per-file results from the walkers, keeping only the
// files that can still be shown: those first in path order whose matches
// reach the limit. Memory stays bounded by about twice the limit (the
// files kept before the limit was reached keep their searchers' chunks,
// those kept after it have their own copy: see [Searcher]). Until the
// files kept reach the limit they are appended as they come and sorted
// once (by sorted); from then on each is inserted in its place. It is safe
// for concurrent use.
type Collector struct {
	mu      sync.Mutex
	files   []FileResult // in path order once ordered is true
	ordered bool
	kept    int // matches in files
	total   int // matches found, files dropped included
	limit   int
	cutoff  string // once hasCut, files after it in path order cannot be shown
	// hasCut is set, under mu, once cutoff is; Skip reads it without the
	// lock: until the limit is reached (with many matches, for the whole
	// walk) a walker asks at every file, and two walkers taking one lock
	// per file for nothing wait on each other
	hasCut atomic.Bool
}

// NewCollector returns a collector for an answer of at most limit matches
// (at least 1).
func NewCollector(limit int) *Collector { return &Collector{limit: max(limit, 1)} }

// Add keeps r, the result of the file at path rel (slash-separated, as the
// answer shows it once renamed: see [Collector.Answer]), when it can still
// be shown, and counts its matches in any case.
func (g *Collector) Add(rel string, r FileResult) {
	r.rel = rel
	g.mu.Lock()
	defer g.mu.Unlock()
	g.total += r.matches
	if g.hasCut.Load() && r.rel > g.cutoff {
		return
	}
	g.kept += r.matches
	if g.ordered {
		// a file kept from here may be dropped again: its own copy of its
		// lines, so that it keeps no searcher's chunk alive once dropped
		// (Searcher.keep); the files kept before share theirs
		r.text = strings.Clone(r.text)
	}
	if !g.ordered {
		g.files = append(g.files, r)
		if g.kept < g.limit {
			return
		}
		g.order()
	} else {
		i := sort.Search(len(g.files), func(i int) bool { return g.files[i].rel >= r.rel })
		g.files = append(g.files, FileResult{})
		copy(g.files[i+1:], g.files[i:])
		g.files[i] = r
	}
	// drop the last files while the others hold more than the limit
	for len(g.files) > 1 && g.kept-g.files[len(g.files)-1].matches >= g.limit {
		g.kept -= g.files[len(g.files)-1].matches
		g.files = g.files[:len(g.files)-1]
	}
	g.cutoff = g.files[len(g.files)-1].rel
	g.hasCut.Store(true)
}

// order sorts the files by path, once.
func (g *Collector) order() {
	if !g.ordered {
		slices.SortFunc(g.files, func(a, b FileResult) int { return strings.Compare(a.rel, b.rel) })
		g.ordered = true
	}
}

// sorted returns the files kept, in path order. Call it once the walk is
// over.
func (g *Collector) sorted() []FileResult {
	files, _ := g.sortedWith(nil) // no error without goroutines
	return files
}

// grepSortHalves is the number of files from which sortedWith sorts two
// halves at once: the sort is a wait between the walk and the answer, in
// which one core would do nothing (5k files take about a millisecond).
const grepSortHalves = 2048

// sortedWith is sorted, sorting the two halves of many files at once, one
// from a goroutine of goFn (nil: here), and merging them. Its error is the
// goroutine's (a panic).
func (g *Collector) sortedWith(goFn func(string, func() error) <-chan error) ([]FileResult, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.ordered || goFn == nil || len(g.files) < grepSortHalves {
		g.order()
		return g.files, nil
	}
	byRel := func(a, b FileResult) int { return strings.Compare(a.rel, b.rel) }
	lo, hi := g.files[:len(g.files)/2], g.files[len(g.files)/2:]
	done := goFn("grep sort", func() error { slices.SortFunc(lo, byRel); return nil })
	slices.SortFunc(hi, byRel)
	if err := <-done; err != nil {
		return nil, fmt.Errorf("grep answer: sorting the files: %w", err)
	}
	merged := make([]FileResult, 0, len(g.files))
	for len(lo) > 0 && len(hi) > 0 {
		if hi[0].rel < lo[0].rel {
			merged, hi = append(merged, hi[0]), hi[1:]
		} else {
			merged, lo = append(merged, lo[0]), lo[1:]
		}
	}
	g.files = append(append(merged, lo...), hi...)
	g.ordered = true
	return g.files, nil
}

// Skip reports whether the file at path rel cannot be shown any more:
// the walker need not search it.
func (g *Collector) Skip(rel string) bool {
	if !g.hasCut.Load() {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return rel > g.cutoff
}

// Answer is the text of grep's answer and what it shows.
type Answer[M any] struct {
	// Text is the answer: "No matches found", or the lines shown, then a
	// notice when it is cut.
	Text string
	// Total is the number of matching lines found, in files left out too.
	Total int
	// Items are the matches shown, in the answer's order.
	Items []M
}

// Options tell [Write] how to write an answer.
type Options[M any] struct {
	MaxBytes int // the answer's size cap
	Context  int // the context lines shown on each side of a match
	// Name turns a collected path into the name the answer shows (nil: as
	// it is).
	Name func(rel string) string
	// Item makes the record of a match shown: its path, line number and
	// text (a substring of the answer).
	Item func(path string, line int, text string) M
	// Parts is the most goroutines that write a large answer.
	Parts int
	// Go runs fn in a guarded goroutine and returns its error (a panic
	// turned into one) on the channel; nil writes everything here.
	Go func(what string, fn func() error) <-chan error
}

// grepPiece is what one file shows in the answer: text (all of the file's
// lines, or the first of them where the answer ends; see FileResult),
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

// grepParallelBytes is the size of answer from which Write writes it
// from several goroutines: the answer is fresh memory, and its first
// writes cost more than the copy.
const grepParallelBytes = 1 << 20

// Write writes the answer of the files collected: matches in path then
// line order, at most the collector's limit of them and at most
// o.MaxBytes in all. The searchers wrote each file's lines but for their
// path (FileResult), so the answer is planned file by file (only the file
// where it ends is read line by line), then written, the path put before
// each line and the matches listed as it goes, their text taken from the
// answer itself. Once limit matches are shown, the answer keeps the
// context lines after the last of them (at most o.Context, in its file)
// and none of those of the matches left out.
func Write[M any](col *Collector, o Options[M]) (Answer[M], error) {
	limit, ctxLines, maxBytes := col.limit, o.Context, o.MaxBytes
	const reserve = 200 // room for the closing notice
	budget := maxBytes - reserve
	goFn := o.Go
	if o.Parts < 2 {
		goFn = nil
	}
	files, err := col.sortedWith(goFn)
	if err != nil {
		return Answer[M]{}, err
	}
	if o.Name != nil {
		for i := range files {
			files[i].rel = o.Name(files[i].rel)
		}
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
	items := make([]M, shown)
	parts := max(1, min(o.Parts, size/grepParallelBytes))
	if o.Go == nil {
		parts = 1
	}
	if err := grepInParts(pieces, parts, o.Go, func(ps []grepPiece) {
		for i := range ps {
			writePiece(&ps[i], buf, out, items, o.Item)
		}
	}); err != nil {
		return Answer[M]{}, err
	}
	a := Answer[M]{Text: strings.TrimSuffix(out, "\n"), Total: col.total, Items: items}
	if col.total == 0 {
		a.Text = "No matches found"
	}
	return a, nil
}

// cut returns the first lines of f that the answer can still show: up to
// matches matches, the context lines after the last of them (at most
// ctxLines) and at most room bytes of the answer; their size in the
// answer; the number of matches among them; and whether room was what
// stopped it.
func (f *FileResult) cut(matches, ctxLines, room int) (text string, size, shown int, cutBytes bool) {
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

// writePiece puts p in buf at its offset, the path before each line, and
// its matches in items, their text taken from out, the string of buf.
func writePiece[M any](p *grepPiece, buf []byte, out string, items []M, item func(string, int, string) M) {
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
		if line[0] == ':' { // ":N: text\n", N as the searcher wrote it
			n, j := 0, 1
			for ; line[j] != ':'; j++ {
				n = n*10 + int(line[j]-'0')
			}
			items[k] = item(p.rel, n, out[at+j+2:at+len(line)-1])
			k++
		}
		at += copy(buf[at:], line)
	}
}

// grepChunksPerPart is how many runs of pieces grepInParts makes for each
// goroutine: they take the next run as they finish one, so that a
// goroutine started late (its thread woken up) or slowed down (the garbage
// collector's worker on its processor) takes fewer, instead of leaving the
// others idle at the end; with one run each, the last part ran alone for
// a millisecond of a 6 ms answer.
const grepChunksPerPart = 8

// grepInParts runs fn on runs of pieces that hold about as many bytes
// each, from parts goroutines at once, each taking the next run when it
// is done with one: parts-1 goroutines started by goFn and this one, and
// returns the first error among them; with one part, fn runs here on all
// of them. The caller would only wait for its goroutines: taking runs
// itself spares one goroutine and the wake-up of the thread that waits.
func grepInParts(pieces []grepPiece, parts int, goFn func(string, func() error) <-chan error, fn func([]grepPiece)) error {
	if parts <= 1 || len(pieces) < 2 {
		fn(pieces)
		return nil
	}
	total := 0
	for _, p := range pieces {
		total += p.size
	}
	chunks := parts * grepChunksPerPart
	runs := make([][]grepPiece, 0, chunks)
	from, acc := 0, 0
	for i, p := range pieces {
		acc += p.size
		if i == len(pieces)-1 || acc*chunks >= total*(len(runs)+1) {
			runs = append(runs, pieces[from:i+1])
			from = i + 1
		}
	}
	var next atomic.Int64
	work := func() {
		for k := next.Add(1) - 1; k < int64(len(runs)); k = next.Add(1) - 1 {
			fn(runs[k])
		}
	}
	done := make([]<-chan error, 0, parts-1)
	for range min(parts, len(runs)) - 1 {
		done = append(done, goFn("grep answer", func() error { work(); return nil }))
	}
	work()
	var first error
	for _, d := range done {
		if err := <-d; err != nil && first == nil {
			first = err
		}
	}
	return first
}
