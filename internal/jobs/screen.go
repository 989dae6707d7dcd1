package jobs

import (
	"io"
	"strings"
	"sync"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/vt"

	"github.com/llmtoolkit/llmtoolkit/internal/guard"
)

// screen is a terminal job's screen: a terminal emulator
// (charmbracelet/x/vt) fed with everything the program prints, so that a
// full-screen program (less, vi, top) is read as the text it shows. The
// emulator's answers to the program's queries (cursor position, device
// attributes) are written back to the terminal, as a real one does.
type screen struct {
	mu      sync.Mutex
	em      *vt.Emulator
	replies *io.PipeWriter // the emulator's answers; closed by close
}

// newScreen returns a cols×rows screen answering through master.
func newScreen(cols, rows int, master io.Writer) *screen {
	em := vt.NewEmulator(cols, rows)
	em.SetScrollbackSize(1) // only the screen is shown: keep no history in memory
	s := &screen{em: em}
	s.replies, _ = em.InputPipe().(*io.PipeWriter)
	go func() {
		defer guard.Recover("jobs: terminal replies", nil, nil)
		_, _ = io.Copy(master, em) // ends when close closes the pipe
	}()
	return s
}

// write feeds the emulator.
func (s *screen) write(p []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer guard.Recover("jobs: terminal emulator", nil, nil) // a bad sequence must not take the job down
	_, _ = s.em.Write(p)
}

// text returns the screen's lines, trailing spaces and empty last lines
// trimmed, and whether the alternate screen is shown.
func (s *screen) text() (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
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
