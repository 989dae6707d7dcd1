package codetools

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Limits of what bash shows: the tail of the output.
const (
	bashMaxLines = 2000
	bashMaxBytes = 50 * 1024
)

// outputCapture keeps everything a command writes in bounded memory: the
// whole output while it is small, then the last bytes in memory for the
// answer plus a spill file on disk, itself capped (see [spillFile]).
type outputCapture struct {
	mu      sync.Mutex
	create  func() (*os.File, error) // makes the spill file
	limit   int64                    // the spill file's cap
	buf     []byte                   // everything until spilled, then the tail
	spill   *spillFile               // the output on disk, once it outgrew the limits
	path    string                   // the spill file's name, once made
	cut     bool                     // the spill file lost its middle
	done    bool                     // finish ran
	fileErr error
	total   int64
	lines   int // '\n' seen
	last    byte
}

func (o *outputCapture) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	o.total += int64(len(p))
	o.lines += bytes.Count(p, []byte{'\n'})
	o.last = p[len(p)-1]
	if o.spill == nil && o.fileErr == nil && !o.done && (len(o.buf)+len(p) > bashMaxBytes || o.lines > bashMaxLines) {
		var f *os.File
		if f, o.fileErr = o.create(); o.fileErr == nil {
			o.path = f.Name()
			o.spill = newSpillFile(f, o.limit)
			_, _ = o.spill.Write(o.buf) // a write error is kept and reported by finish
		}
	}
	if o.spill != nil {
		_, _ = o.spill.Write(p)
	}
	o.buf = append(o.buf, p...)
	if o.spill != nil || o.fileErr != nil || o.path != "" {
		if len(o.buf) > 2*bashMaxBytes { // keep only the tail
			n := copy(o.buf, o.buf[len(o.buf)-bashMaxBytes:])
			o.buf = o.buf[:n]
		}
	}
	return len(p), nil
}

// finish closes the spill file, if one was made, and returns its name ("" if
// none). Output written after finish is no longer spilled. It is idempotent.
func (o *outputCapture) finish() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	if o.spill != nil {
		if err := o.spill.finish(); err != nil && o.fileErr == nil {
			o.fileErr = err
		}
		o.cut = o.spill.cut
		o.spill = nil
	}
	return o.path
}

// totalLines counts the last line even without its '\n'.
func (o *outputCapture) totalLines() int {
	if o.total == 0 {
		return 0
	}
	if o.last != '\n' {
		return o.lines + 1
	}
	return o.lines
}

// text returns what the model sees: the output, or its tail with the
// notice `[Showing lines A-B of N. Full output: PATH]` (`Output cut to its
// first X and last Y of Z: PATH` when the spill file hit its cap), or
// "(no output)". It calls finish.
func (o *outputCapture) text() string {
	o.finish()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.total == 0 {
		return "(no output)"
	}
	n := o.totalLines()
	if o.path == "" && o.fileErr == nil {
		return strings.ToValidUTF8(strings.TrimSuffix(string(o.buf), "\n"), "\uFFFD")
	}
	tail := o.buf
	if len(tail) > bashMaxBytes {
		tail = tail[len(tail)-bashMaxBytes:]
	}
	tail = bytes.TrimSuffix(tail, []byte{'\n'})
	partial := false
	if int64(len(tail)) < o.total-1 { // the tail may start inside a line
		if i := bytes.IndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		} else {
			partial = true // one line longer than the limit: show its end
		}
	}
	shown := bytes.Count(tail, []byte{'\n'}) + 1
	for shown > bashMaxLines {
		tail = tail[bytes.IndexByte(tail, '\n')+1:]
		shown--
	}
	var where string
	switch {
	case o.path == "":
		where = fmt.Sprintf("Full output: unavailable (%v)", o.fileErr)
	case o.cut:
		head := o.limit / 2
		where = fmt.Sprintf("Output cut to its first %s and last %s of %s: %s",
			textutil.HumanSize(head), textutil.HumanSize(o.limit-head-spillMarkerMax), textutil.HumanSize(o.total), o.path)
	default:
		where = "Full output: " + o.path
	}
	if o.path != "" && o.fileErr != nil {
		where += fmt.Sprintf(" (incomplete: %v)", o.fileErr)
	}
	text := strings.ToValidUTF8(string(tail), "\uFFFD")
	if partial {
		return fmt.Sprintf("%s\n\n[Showing the last %s of line %d of %d. %s]", text, textutil.HumanSize(int64(len(tail))), n, n, where)
	}
	return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d. %s]", text, n-shown+1, n, n, where)
}
