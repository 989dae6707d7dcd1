package jobs

import (
	"bytes"
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// screen is a terminal job's screen: a terminal emulator
// (charmbracelet/x/vt) fed with everything the program prints once it
// switches to the alternate screen, so that a full-screen program (less,
// vi, top) is read as the text it shows. The emulator is made only then
// (it holds about 4.5 MiB, most of it its parser's buffer): a REPL or a
// shell that never goes full-screen costs nothing here. Its answers to the
// program's queries (cursor position, device attributes) are written back
// to the terminal, as a real one does.
type screen struct {
	mu         sync.Mutex
	cols, rows int
	master     io.Writer
	em         *vt.Emulator   // nil until the alternate screen is entered
	replies    *io.PipeWriter // the emulator's answers; closed by close
	carry      []byte         // the last bytes seen, for a sequence split across writes
	closed     bool
}

// altScreen are the sequences that enter the alternate screen (xterm's
// 1049, 1047, 47).
var altScreen = [][]byte{[]byte("\x1b[?1049h"), []byte("\x1b[?1047h"), []byte("\x1b[?47h")}

// newScreen returns a cols×rows screen answering through master.
func newScreen(cols, rows int, master io.Writer) *screen {
	return &screen{cols: cols, rows: rows, master: master}
}

// start makes the emulator; s.mu is held.
func (s *screen) start() {
	em := vt.NewEmulator(s.cols, s.rows)
	em.SetScrollbackSize(1) // only the screen is shown: keep no history in memory
	s.em = em
	s.replies, _ = em.InputPipe().(*io.PipeWriter)
	go func() {
		defer guard.Recover("jobs: terminal replies", nil, nil)
		_, _ = io.Copy(s.master, em) // ends when close closes the pipe
	}()
}

// write feeds the emulator, making it when the program enters the
// alternate screen.
func (s *screen) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer guard.Recover("jobs: terminal emulator", nil, nil) // a bad sequence must not take the job down
	if s.em == nil {
		if s.closed {
			return
		}
		buf := append(s.carry, p...)
		at := -1
		for _, seq := range altScreen {
			if i := bytes.Index(buf, seq); i >= 0 && (at < 0 || i < at) {
				at = i
			}
		}
		if at < 0 {
			s.carry = append(s.carry[:0], buf[max(0, len(buf)-8):]...)
			return
		}
		s.start()
		p, s.carry = buf[at:], nil
	}
	_, _ = s.em.Write(p)
}

// text returns the screen's lines, trailing spaces and empty last lines
// trimmed, and whether the alternate screen is shown ("", false before a
// program went full-screen).
func (s *screen) text() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.em == nil {
		return "", false
	}
	var b strings.Builder
	lines := strings.Split(s.em.String(), "\n")
	for i, l := range lines {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(strings.TrimRight(l, " "))
	}
	return strings.TrimRight(b.String(), "\n"), s.em.IsAltScreen()
}

// close stops the replies; the screen stays readable.
func (s *screen) close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	if s.replies != nil {
		_ = s.replies.CloseWithError(io.EOF)
	}
}

// Plain returns a terminal's output as plain text: escape sequences
// removed (charmbracelet/x/ansi), line ends as "\n", and of a line
// rewritten with carriage returns (a progress bar) only its last state.
func Plain(data []byte) string {
	s := ansi.Strip(string(data))
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if !strings.Contains(s, "\r") {
		return s
	}
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if k := strings.LastIndexByte(strings.TrimRight(l, "\r"), '\r'); k >= 0 {
			lines[i] = l[k+1:]
		}
	}
	return strings.Join(lines, "\n")
}
