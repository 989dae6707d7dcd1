package textedit

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// maxDiffEdits bounds the line edits the diff looks for between the
// changed parts of two texts; past it, the whole changed part is shown as
// removed then added.
const maxDiffEdits = 2000

// maxDiffLineBytes cuts the lines a diff shows.
const maxDiffLineBytes = 500

// diffOp is a run of lines that are equal, removed or added.
type diffOp struct {
	kind byte // ' ', '-' or '+'
	a, b int  // first line in before (for ' ' and '-') and after (' ', '+'), 0-based
	n    int  // number of lines
}

// lineDiff returns the runs that turn before's lines into after's.
func lineDiff(a, b []string) []diffOp {
	p := 0
	for p < len(a) && p < len(b) && a[p] == b[p] {
		p++
	}
	q := 0
	for q < len(a)-p && q < len(b)-p && a[len(a)-1-q] == b[len(b)-1-q] {
		q++
	}
	var ops []diffOp
	add := func(kind byte, i, j int) {
		if n := len(ops); n > 0 && ops[n-1].kind == kind {
			ops[n-1].n++
			return
		}
		ops = append(ops, diffOp{kind: kind, a: i, b: j, n: 1})
	}
	if p > 0 {
		ops = append(ops, diffOp{kind: ' ', a: 0, b: 0, n: p})
	}
	ma, mb := a[p:len(a)-q], b[p:len(b)-q]
	if script, ok := myers(ma, mb); ok {
		i, j := 0, 0
		for _, k := range script {
			switch k {
			case ' ':
				add(' ', p+i, p+j)
				i++
				j++
			case '-':
				add('-', p+i, p+j)
				i++
			case '+':
				add('+', p+i, p+j)
				j++
			}
		}
	} else {
		if len(ma) > 0 {
			ops = append(ops, diffOp{kind: '-', a: p, b: p, n: len(ma)})
		}
		if len(mb) > 0 {
			ops = append(ops, diffOp{kind: '+', a: p + len(ma), b: p, n: len(mb)})
		}
	}
	if q > 0 {
		ops = append(ops, diffOp{kind: ' ', a: len(a) - q, b: len(b) - q, n: q})
	}
	return ops
}

// myers returns the shortest edit script from a to b, one byte per line
// (' ', '-', '+'), or false past maxDiffEdits edits. It keeps only the
// part of each round's frontier it needs: memory grows with the square of
// the number of edits, not with the lengths.
func myers(a, b []string) ([]byte, bool) {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		s := make([]byte, 0, n+m)
		for range n {
			s = append(s, '-')
		}
		for range m {
			s = append(s, '+')
		}
		return s, true
	}
	limit := min(n+m, maxDiffEdits)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int
	for d := 0; d <= limit; d++ {
		trace = append(trace, append([]int(nil), v[off-d:off+d+1]...))
		for k := -d; k <= d; k += 2 {
			x, y, _ := myersStep(v, off, d, k, a, b)
			if x >= n && y >= m {
				return backtrack(trace, d, n, m), true
			}
		}
	}
	return nil, false
}

// myersStep takes one step of Myers' search on diagonal k in round d: from
// the better of its neighbours' furthest points (v, indexed from off), one
// edit, then along the lines a and b share. It records and returns the
// furthest point (x, y) and how many shared lines it followed.
func myersStep(v []int, off, d, k int, a, b []string) (x, y, snake int) {
	if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
		x = v[off+k+1]
	} else {
		x = v[off+k-1] + 1
	}
	y = x - k
	for x < len(a) && y < len(b) && a[x] == b[y] {
		x++
		y++
		snake++
	}
	v[off+k] = x
	return x, y, snake
}

func backtrack(trace [][]int, d, x, y int) []byte {
	var rev []byte
	for ; d > 0; d-- {
		prev := trace[d] // the frontier after round d-1, k from -d to d
		k := x - y
		var pk int
		if k == -d || (k != d && prev[k-1+d] < prev[k+1+d]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := prev[pk+d]
		py := px - pk
		for x > px && y > py {
			rev = append(rev, ' ')
			x--
			y--
		}
		if x == px {
			rev = append(rev, '+')
		} else {
			rev = append(rev, '-')
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		rev = append(rev, ' ')
		x--
		y--
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

// diffLines splits a text into lines for a diff, without line endings.
func diffLines(s string) []string {
	s = strings.TrimPrefix(s, utf8BOM)
	if s == "" {
		return nil
	}
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// Diff is the line diff of two texts, computed once for the compact
// diff the model reads and the unified diff a host shows. Only the lines
// around the change are split (see diffWindow).
type Diff struct {
	a, b    []string // lines of the changed windows of before and after
	skipped int      // lines before the windows, the same in both
	ops     []diffOp // runs turning a into b
	first   int      // first changed line of after, 1-based; 0 when no line changed
	same    bool     // before == after
	width   int      // digits of the largest line number of either text
}

// NewDiff diffs before and after, keeping context lines around each
// change.
func NewDiff(before, after string, context int) *Diff {
	wb, wa, skipped, same := diffWindow(before, after, context)
	d := &Diff{a: diffLines(wb), b: diffLines(wa), skipped: skipped, same: same}
	d.ops = lineDiff(d.a, d.b)
	for _, op := range d.ops {
		if op.kind != ' ' {
			d.first = skipped + op.b + 1
			break
		}
	}
	// The texts share what lies around the windows: one count gives both.
	nb := strings.Count(before, "\n")
	na := nb - strings.Count(wb, "\n") + strings.Count(wa, "\n")
	d.width = len(strconv.Itoa(max(nb, na) + 1))
	return d
}

// eolNote stands for a diff whose lines are all equal although the texts
// differ.
const eolNote = "(only line endings or the final newline changed)"

// compactDiff renders the changes from before to after as hunks with
// context lines around each change and line numbers: removed lines carry
// their number in before, the others their number in after. It returns
// the text, at most maxLines lines, and the first changed line of after
// (1-based; 0 when nothing changed).
func compactDiff(before, after string, context, maxLines int) (string, int) {
	d := NewDiff(before, after, context)
	return d.Compact(context, maxLines), d.FirstChanged()
}

// FirstChanged is the first changed line of after, 1-based: 1 when only
// line endings changed, 0 when nothing did.
func (d *Diff) FirstChanged() int {
	if d.first == 0 && !d.same {
		return 1
	}
	return d.first
}

// Compact renders the compact diff, at most maxLines lines (<= 0: no
// limit). Only the lines shown are formatted.
func (d *Diff) Compact(context, maxLines int) string {
	if d.first == 0 {
		if d.same {
			return ""
		}
		return eolNote
	}
	var sb strings.Builder
	shown, more := 0, 0
	room := func() bool {
		if maxLines > 0 && shown >= maxLines {
			more++
			return false
		}
		shown++
		return true
	}
	// lines writes n lines of src from index from, numbered from num.
	lines := func(kind byte, src []string, from, n int) {
		k := n
		if maxLines > 0 {
			k = min(n, max(maxLines-shown, 0))
		}
		shown += k
		more += n - k
		for i := from; i < from+k; i++ {
			text := src[i]
			if len(text) > maxDiffLineBytes {
				text = textutil.CutUTF8(text, maxDiffLineBytes) + "…"
			}
			if text == "" {
				fmt.Fprintf(&sb, "%c%*d\n", kind, d.width, d.skipped+i+1)
				continue
			}
			fmt.Fprintf(&sb, "%c%*d %s\n", kind, d.width, d.skipped+i+1, text)
		}
	}
	for i, op := range d.ops {
		switch op.kind {
		case '-':
			lines('-', d.a, op.a, op.n)
		case '+':
			lines('+', d.b, op.b, op.n)
		case ' ':
			// Context after the previous change, then before the next one.
			head, tail := 0, 0
			if i > 0 {
				head = min(context, op.n)
			}
			if i < len(d.ops)-1 {
				tail = min(context, op.n)
			}
			if head+tail >= op.n {
				lines(' ', d.b, op.b, op.n)
				continue
			}
			lines(' ', d.b, op.b, head)
			if i > 0 && i < len(d.ops)-1 && room() {
				sb.WriteString(strings.Repeat(" ", d.width+1) + " ...\n")
			}
			lines(' ', d.b, op.b+op.n-tail, tail)
		}
	}
	out := strings.TrimSuffix(sb.String(), "\n")
	if more > 0 {
		out += fmt.Sprintf("\n... (%d more diff lines)", more)
	}
	return out
}

// Counts returns the lines removed and added by a minimal diff (what diff
// -u and git diff --stat count), even when the diff shown is not minimal
// (past maxDiffEdits edits); bounded is true when even the linear-space
// count gave up (past maxCountWork steps) and the counts are the shown
// diff's.
func (d *Diff) Counts() (removed, added int, bounded bool) {
	for _, op := range d.ops {
		switch op.kind {
		case '-':
			removed += op.n
		case '+':
			added += op.n
		}
	}
	if removed+added > maxDiffEdits {
		// myers gave up on the shown diff's minimality: count exactly.
		if r, a, ok := minimalCounts(d.a, d.b, maxCountWork); ok {
			return r, a, false
		}
		return removed, added, true
	}
	return removed, added, false
}

// maxCountWork bounds the steps minimalCounts takes (tens of milliseconds).
const maxCountWork = 30_000_000

// minimalCounts returns the lines removed and added by a minimal diff of a
// and b (what diff -u and git diff --stat count), in space linear in
// their lengths: Myers' greedy search without its trace, on the part
// between their common prefix and suffix. It reports false past work
// steps. Texts sharing no line at all are answered at once.
func minimalCounts(a, b []string, work int) (removed, added int, ok bool) {
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	n, m := len(a), len(b)
	if n == 0 || m == 0 || !shareALine(a, b) {
		return n, m, true
	}
	off := n + m + 1
	v := make([]int, 2*(n+m)+3)
	for d := 0; d <= n+m; d++ {
		for k := -d; k <= d; k += 2 {
			x, y, snake := myersStep(v, off, d, k, a, b)
			work -= snake
			if x >= n && y >= m {
				lcs := (n + m - d) / 2
				return n - lcs, m - lcs, true
			}
		}
		if work -= 2*d + 1; work < 0 {
			return 0, 0, false
		}
	}
	return n, m, true // not reached: d = n+m always ends
}

// shareALine reports whether a and b have a line in common.
func shareALine(a, b []string) bool {
	seen := make(map[string]struct{}, len(a))
	for _, l := range a {
		seen[l] = struct{}{}
	}
	for _, l := range b {
		if _, ok := seen[l]; ok {
			return true
		}
	}
	return false
}

// Unified renders the diff in the unified format (as diff -u and git
// diff do, lines without their line endings) with context lines around
// each change, at most maxBytes bytes: past them it is cut, at a UTF-8
// boundary, and ends with a line saying so. When only line endings or
// the final newline changed, it is eolNote; when nothing changed, "".
func (d *Diff) Unified(path string, context, maxBytes int) (diff string, truncated bool) {
	if d.first == 0 {
		if d.same {
			return "", false
		}
		return eolNote, false
	}
	marker := fmt.Sprintf("\n... (diff cut at %d KiB)", maxBytes>>10)
	budget := maxBytes - len(marker)
	var sb strings.Builder
	// write adds s unless the budget is spent; it cuts the line that
	// spends it.
	write := func(s ...string) bool {
		for _, part := range s {
			if sb.Len()+len(part) > budget {
				sb.WriteString(textutil.CutUTF8(part, budget-sb.Len()))
				truncated = true
				return false
			}
			sb.WriteString(part)
		}
		return true
	}
	write("--- a/", path, "\n+++ b/", path, "\n")
	ops := d.ops
	for i := 0; i < len(ops) && !truncated; i++ {
		if ops[i].kind == ' ' {
			continue
		}
		// A hunk runs from change i to change j, taking in the equal runs
		// between them that are short enough.
		j := i
		for j+1 < len(ops) {
			if ops[j+1].kind != ' ' {
				j++
			} else if j+2 < len(ops) && ops[j+1].n <= 2*context {
				j += 2
			} else {
				break
			}
		}
		lead, trail := 0, 0
		if i > 0 {
			lead = min(context, ops[i-1].n)
		}
		if j+1 < len(ops) {
			trail = min(context, ops[j+1].n)
		}
		aLen, bLen := lead+trail, lead+trail
		for _, op := range ops[i : j+1] {
			if op.kind != '+' {
				aLen += op.n
			}
			if op.kind != '-' {
				bLen += op.n
			}
		}
		aStart, bStart := ops[i].a-lead, ops[i].b-lead
		if !write("@@ -", hunkRange(d.skipped+aStart, aLen), " +", hunkRange(d.skipped+bStart, bLen), " @@\n") {
			break
		}
		emit := func(kind string, src []string, from, n int) bool {
			for k := from; k < from+n; k++ {
				if !write(kind, src[k], "\n") {
					return false
				}
			}
			return true
		}
		ok := emit(" ", d.b, bStart, lead)
		for _, op := range ops[i : j+1] {
			switch {
			case !ok:
			case op.kind == '-':
				ok = emit("-", d.a, op.a, op.n)
			case op.kind == '+':
				ok = emit("+", d.b, op.b, op.n)
			default:
				ok = emit(" ", d.b, op.b, op.n)
			}
		}
		if ok && trail > 0 {
			emit(" ", d.b, ops[j+1].b, trail)
		}
		i = j
	}
	out := strings.TrimSuffix(sb.String(), "\n")
	if truncated {
		out += marker
	}
	return out, truncated
}

// hunkRange renders one side of a hunk header: start is the 0-based index
// of its first line; an empty side names the line before it.
func hunkRange(start, n int) string {
	switch n {
	case 0:
		return strconv.Itoa(start) + ",0"
	case 1:
		return strconv.Itoa(start + 1)
	}
	return strconv.Itoa(start+1) + "," + strconv.Itoa(n)
}

// diffWindow cuts the common start and end of two texts down to whole
// lines plus context lines, so that a diff of a large file with a small
// change only splits a few lines. skipped is the number of lines cut from
// the start; same reports that the texts are equal.
func diffWindow(before, after string, context int) (wb, wa string, skipped int, same bool) {
	p := commonPrefix(before, after)
	if p == len(before) && p == len(after) {
		return "", "", 0, true
	}
	ps := strings.LastIndexByte(before[:p], '\n') + 1
	for k := 0; k < context && ps > 0; k++ {
		ps = strings.LastIndexByte(before[:ps-1], '\n') + 1
	}
	skipped = strings.Count(before[:ps], "\n")
	b, a := before[ps:], after[ps:]
	s := commonSuffix(b, a)
	// The kept end starts at a line start, context lines later.
	lineStart := func(t string, i int) bool { return i == 0 || t[i-1] == '\n' }
	if s > 0 && !(lineStart(b, len(b)-s) && lineStart(a, len(a)-s)) {
		s = nextLine(b, s)
	}
	for k := 0; k < context && s > 0; k++ {
		s = nextLine(b, s)
	}
	return b[:len(b)-s], a[:len(a)-s], skipped, false
}

// commonPrefix is the length of the longest common prefix of a and b,
// compared a block at a time.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for _, block := range [...]int{4096, 64} {
		for i+block <= n && a[i:i+block] == b[i:i+block] {
			i += block
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// commonSuffix is the length of the longest common suffix of a and b,
// compared a block at a time.
func commonSuffix(a, b string) int {
	n := min(len(a), len(b))
	s := 0
	for _, block := range [...]int{4096, 64} {
		for s+block <= n && a[len(a)-s-block:len(a)-s] == b[len(b)-s-block:len(b)-s] {
			s += block
		}
	}
	for s < n && a[len(a)-1-s] == b[len(b)-1-s] {
		s++
	}
	return s
}

// nextLine shortens the suffix of b of length s to start at the next line.
func nextLine(b string, s int) int {
	i := strings.IndexByte(b[len(b)-s:], '\n')
	if i < 0 {
		return 0
	}
	return s - (i + 1)
}
