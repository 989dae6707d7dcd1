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
// whole output while it is small, then a temporary file with all of it plus
// the last bytes in memory for the answer.
type outputCapture struct {
	mu      sync.Mutex
	buf     []byte   // everything until spilled, then the tail
	file    *os.File // the full output, once it outgrew the limits
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
	if o.file == nil && o.fileErr == nil && (len(o.buf)+len(p) > bashMaxBytes || o.lines > bashMaxLines) {
		o.file, o.fileErr = os.CreateTemp("", "llmtoolkit-bash-*.log")
		if o.fileErr == nil {
			_, o.fileErr = o.file.Write(o.buf)
		}
	}
	if o.file != nil && o.fileErr == nil {
		if _, err := o.file.Write(p); err != nil {
			o.fileErr = err
		}
	}
	o.buf = append(o.buf, p...)
	if o.file != nil || o.fileErr != nil {
		if len(o.buf) > 2*bashMaxBytes { // keep only the tail
			n := copy(o.buf, o.buf[len(o.buf)-bashMaxBytes:])
			o.buf = o.buf[:n]
		}
	}
	return len(p), nil
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
// notice `[Showing lines A-B of N. Full output: PATH]`, or "(no output)".
func (o *outputCapture) text() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.file != nil {
		o.file.Close()
	}
	if o.total == 0 {
		return "(no output)"
	}
	n := o.totalLines()
	if o.file == nil && o.fileErr == nil {
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
	where := "unavailable"
	if o.file != nil {
		where = o.file.Name()
	}
	if o.fileErr != nil {
		where += fmt.Sprintf(" (incomplete: %v)", o.fileErr)
	}
	text := strings.ToValidUTF8(string(tail), "\uFFFD")
	if partial {
		return fmt.Sprintf("%s\n\n[Showing the last %s of line %d of %d. Full output: %s]", text, textutil.HumanSize(int64(len(tail))), n, n, where)
	}
	return fmt.Sprintf("%s\n\n[Showing lines %d-%d of %d. Full output: %s]", text, n-shown+1, n, n, where)
}
