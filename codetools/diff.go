package codetools

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
	kind   byte // ' ', '-' or '+'
	a, b   int  // first line in before (for ' ' and '-') and after (' ', '+'), 0-based
	n      int  // number of lines
	aLines []string
	bLines []string
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
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, d, n, m), true
			}
		}
	}
	return nil, false
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

// compactDiff renders the changes from before to after as hunks with
// context lines around each change and line numbers: removed lines carry
// their number in before, the others their number in after. It returns
// the text, at most maxLines lines, and the first changed line of after
// (1-based; 0 when nothing changed).
func compactDiff(before, after string, context, maxLines int) (string, int) {
	wb, wa, skipped := diffWindow(before, after, context)
	a, b := diffLines(wb), diffLines(wa)
	ops := lineDiff(a, b)
	first := 0
	for _, op := range ops {
		if op.kind != ' ' {
			first = skipped + op.b + 1
			break
		}
	}
	if first == 0 {
		if before == after {
			return "", 0
		}
		// Only line endings or a final newline differ.
		return "(only line endings or the final newline changed)", 1
	}
	width := len(strconv.Itoa(max(strings.Count(before, "\n"), strings.Count(after, "\n")) + 1))
	var sb strings.Builder
	line := func(kind byte, num int, text string) {
		if len(text) > maxDiffLineBytes {
			text = textutil.CutUTF8(text, maxDiffLineBytes) + "…"
		}
		if text == "" {
			fmt.Fprintf(&sb, "%c%*d\n", kind, width, skipped+num)
			return
		}
		fmt.Fprintf(&sb, "%c%*d %s\n", kind, width, skipped+num, text)
	}
	for i, op := range ops {
		switch op.kind {
		case '-':
			for k := range op.n {
				line('-', op.a+k+1, a[op.a+k])
			}
		case '+':
			for k := range op.n {
				line('+', op.b+k+1, b[op.b+k])
			}
		case ' ':
			// Context after the previous change, then before the next one.
			head, tail := 0, 0
			if i > 0 {
				head = min(context, op.n)
			}
			if i < len(ops)-1 {
				tail = min(context, op.n)
			}
			if head+tail >= op.n {
				for k := range op.n {
					line(' ', op.b+k+1, b[op.b+k])
				}
				continue
			}
			for k := range head {
				line(' ', op.b+k+1, b[op.b+k])
			}
			if i > 0 && i < len(ops)-1 {
				sb.WriteString(strings.Repeat(" ", width+1) + " ...\n")
			}
			for k := op.n - tail; k < op.n; k++ {
				line(' ', op.b+k+1, b[op.b+k])
			}
		}
	}
	tr := textutil.Head(strings.TrimSuffix(sb.String(), "\n"), maxLines, 0)
	out := tr.Content
	if tr.Truncated {
		out += fmt.Sprintf("\n... (%d more diff lines)", tr.TotalLines-tr.OutputLines)
	}
	return out, first
}

// diffWindow cuts the common start and end of two texts down to whole
// lines plus context lines, so that a diff of a large file with a small
// change only splits a few lines. skipped is the number of lines cut from
// the start.
func diffWindow(before, after string, context int) (wb, wa string, skipped int) {
	p := 0
	for p < len(before) && p < len(after) && before[p] == after[p] {
		p++
	}
	ps := strings.LastIndexByte(before[:p], '\n') + 1
	for k := 0; k < context && ps > 0; k++ {
		ps = strings.LastIndexByte(before[:ps-1], '\n') + 1
	}
	skipped = strings.Count(before[:ps], "\n")
	b, a := before[ps:], after[ps:]
	s := 0
	for s < len(b) && s < len(a) && b[len(b)-1-s] == a[len(a)-1-s] {
		s++
	}
	// The kept end starts at a line start, context lines later.
	lineStart := func(t string, i int) bool { return i == 0 || t[i-1] == '\n' }
	if s > 0 && !(lineStart(b, len(b)-s) && lineStart(a, len(a)-s)) {
		s = nextLine(b, s)
	}
	for k := 0; k < context && s > 0; k++ {
		s = nextLine(b, s)
	}
	return b[:len(b)-s], a[:len(a)-s], skipped
}

// nextLine shortens the suffix of b of length s to start at the next line.
func nextLine(b string, s int) int {
	i := strings.IndexByte(b[len(b)-s:], '\n')
	if i < 0 {
		return 0
	}
	return s - (i + 1)
}
