package proc

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"

	"github.com/llmtoolkit/llmtoolkit/internal/textutil"
)

// Limits of what bash shows: the tail of the output (MaxLines lines or
// MaxBytes bytes, whichever is shorter).
const (
	MaxLines = 2000
	MaxBytes = 50 * 1024
)

// Output keeps everything a command writes in bounded memory: the
// whole output while it is small, then the last bytes in memory for the
// answer plus a spill file on disk, itself capped (see [SpillFile]).
type Output struct {
	mu      sync.Mutex
	create  func() (*os.File, error) // makes the spill file
	limit   int64                    // the spill file's cap
	buf     []byte                   // everything until spilled, then the tail
	spill   *SpillFile               // the output on disk, once it outgrew the limits
	path    string                   // the spill file's name, once made
	cut     bool                     // the spill file lost its middle
	done    bool                     // Finish ran
	fileErr error
	total   int64
	lines   int // '\n' seen
	last    byte
}

// NewOutput returns an empty capture; create makes its spill file, capped
// at limit bytes (see [SpillFile]).
func NewOutput(create func() (*os.File, error), limit int64) *Output {
	return &Output{create: create, limit: limit}
}

// Write keeps p; it never fails (a spill file's error shows in Text).
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	o.total += int64(len(p))
	o.lines += bytes.Count(p, []byte{'\n'})
	o.last = p[len(p)-1]
	if o.spill == nil && o.fileErr == nil && !o.done && (len(o.buf)+len(p) > MaxBytes || o.lines > MaxLines) {
		var f *os.File
		if f, o.fileErr = o.create(); o.fileErr == nil {
			o.path = f.Name()
			o.spill = NewSpillFile(f, o.limit)
			_, _ = o.spill.Write(o.buf) // a write error is kept and reported by finish
		}
	}
	if o.spill != nil {
		_, _ = o.spill.Write(p)
	}
	o.buf = append(o.buf, p...)
	if o.spill != nil || o.fileErr != nil || o.path != "" {
		if len(o.buf) > 2*MaxBytes { // keep only the tail
			n := copy(o.buf, o.buf[len(o.buf)-MaxBytes:])
			o.buf = o.buf[:n]
		}
	}
	return len(p), nil
}

// Finish closes the spill file, if one was made, and returns its name ("" if
// none). Output written after Finish is no longer spilled. It is idempotent.
func (o *Output) Finish() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.done = true
	if o.spill != nil {
		if err := o.spill.Finish(); err != nil && o.fileErr == nil {
			o.fileErr = err
		}
		o.cut = o.spill.cut
		o.spill = nil
	}
	return o.path
}

// totalLines counts the last line even without its '\n'.
func (o *Output) totalLines() int {
	if o.total == 0 {
		return 0
	}
	if o.last != '\n' {
		return o.lines + 1
	}
	return o.lines
}

// Text returns what the model sees: the output, or its tail with the
// notice `[Showing lines A-B of N. Full output: PATH]` (`Output cut to its
// first X and last Y of Z: PATH` when the spill file hit its cap), or
// "(no output)". It calls Finish.
func (o *Output) Text() string {
	o.Finish()
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
	if len(tail) > MaxBytes {
		tail = tail[len(tail)-MaxBytes:]
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
	for shown > MaxLines {
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

// Total is the number of bytes written.
func (o *Output) Total() int64 {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.total
}

// Path is the spill file's name, "" when none was made.
func (o *Output) Path() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.path
}

// Cut reports whether the spill file lost its middle (known after Finish).
func (o *Output) Cut() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.cut
}
