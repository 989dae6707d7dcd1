package codetools

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var sessionRe = regexp.MustCompile(`Process running with session ID (\d+)`)

// session reads the session id from exec_command's answer.
func session(t *testing.T, answer string) int { return idIn(t, sessionRe, answer) }

// typeUntil writes chars (once) then reads until the answer holds want.
func typeUntil(t *testing.T, c *CodeTools, id int, chars, want string) string {
	t.Helper()
	var all strings.Builder
	args := map[string]any{"session_id": id, "chars": chars, "yield_time_ms": 150}
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		out, err := run(t, c, "write_stdin", args)
		require.NoError(t, err)
		all.WriteString(out)
		if strings.Contains(all.String(), want) {
			return all.String()
		}
		args = map[string]any{"session_id": id, "yield_time_ms": 150}
	}
	t.Fatalf("never saw %q in:\n%s", want, all.String())
	return ""
}

func needProgram(t *testing.T, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is missing: the CI image must have it", name)
		}
		t.Skipf("%s is missing", name)
	}
}

func TestTerminalToolsAreOptIn(t *testing.T) {
	c := newTools(t, WithTerminals())
	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	assert.Len(t, names, 14)
	assert.Subset(t, names, []string{"exec_command", "write_stdin"})
	tool, _ := c.LookupTool("exec_command")
	for _, arg := range []string{"cmd", "tty", "yield_time_ms", "max_output_tokens", "workdir"} {
		assert.Contains(t, tool.Parameters["properties"], arg)
	}
	tool, _ = c.LookupTool("write_stdin")
	for _, arg := range []string{"session_id", "chars", "yield_time_ms", "max_output_tokens"} {
		assert.Contains(t, tool.Parameters["properties"], arg)
	}
}

func TestExecCommandEndsWithinTheYield(t *testing.T) {
	c := newTools(t, WithTerminals())
	out := mustRun(t, c, "exec_command", map[string]any{"cmd": "echo hi; exit 3", "yield_time_ms": 20000})
	assert.Contains(t, out, "Process exited with code 3")
	assert.Contains(t, out, "Output:\nhi\n")
	// A pipe session takes input too.
	out = mustRun(t, c, "exec_command", map[string]any{"cmd": "read x; echo got:$x", "yield_time_ms": 200})
	id := session(t, out)
	typeUntil(t, c, id, "abc\n", "got:abc")
	typeUntil(t, c, id, "", "Process exited with code 0")
	// Output is cut in the middle past max_output_tokens.
	out = mustRun(t, c, "exec_command", map[string]any{"cmd": "seq 1 20000", "max_output_tokens": 100, "yield_time_ms": 20000})
	assert.Contains(t, out, "Output:\n1\n2\n")
	assert.Contains(t, out, "cut ...]")
	assert.True(t, strings.HasSuffix(strings.TrimSpace(out), "20000"))
	// workdir, inside the root.
	require.NoError(t, os.Mkdir(filepath.Join(c.Root(), "sub dir"), 0o755))
	out = mustRun(t, c, "exec_command", map[string]any{"cmd": "pwd", "workdir": "sub dir", "yield_time_ms": 20000})
	assert.Contains(t, out, filepath.Join(c.Root(), "sub dir"))
}

// TestPythonREPLThroughTheTerminal: a REPL driven through the tools, a
// prompt answered, Ctrl-C delivered.
func TestPythonREPLThroughTheTerminal(t *testing.T) {
	needPython(t)
	c := newTools(t, WithTerminals())
	out := mustRun(t, c, "exec_command", map[string]any{"cmd": "python3 -q", "tty": true, "yield_time_ms": 1000})
	id := session(t, out)
	if !strings.Contains(out, ">>> ") { // the prompt comes in the first answer on a quick machine
		typeUntil(t, c, id, "", ">>> ")
	}
	out = typeUntil(t, c, id, "print(6*7)\n", "42")
	assert.NotContains(t, out, "\x1b", "escape sequences are removed")
	typeUntil(t, c, id, "name = input('Name? ')\n", "Name? ")
	typeUntil(t, c, id, "Ada\n", ">>> ")
	typeUntil(t, c, id, "print('hello', name)\n", "hello Ada")
	typeUntil(t, c, id, "import time; time.sleep(100)\n", "time.sleep(100)")
	typeUntil(t, c, id, "\x03", "KeyboardInterrupt")
	typeUntil(t, c, id, "print('still here')\n", "still here")
	typeUntil(t, c, id, "\x04", "Process exited with code 0")
}

// TestBashThroughTheTerminal: bash itself as the REPL; Ctrl-C interrupts
// the foreground command, not the shell.
func TestBashThroughTheTerminal(t *testing.T) {
	c := newTools(t, WithTerminals())
	out := mustRun(t, c, "exec_command", map[string]any{"cmd": "PS1='$ ' exec bash --norc --noprofile -i", "tty": true, "yield_time_ms": 500})
	id := session(t, out)
	typeUntil(t, c, id, "echo $((40+2))\n", "42")
	typeUntil(t, c, id, "read -p 'Continue? ' ans; echo answer=$ans\n", "Continue? ")
	typeUntil(t, c, id, "yes\n", "answer=yes")
	typeUntil(t, c, id, "sleep 100\n", "sleep 100")
	time.Sleep(200 * time.Millisecond)
	typeUntil(t, c, id, "\x03", "$ ")
	typeUntil(t, c, id, "echo alive-$?\n", "alive-130")
	typeUntil(t, c, id, "exit 7\n", "Process exited with code 7")
}

// TestFullScreenProgramsReadAsScreens: less and vi are answered with
// their screens as text.
func TestFullScreenProgramsReadAsScreens(t *testing.T) {
	c := newTools(t, WithTerminals())
	var lines []string
	for i := 1; i <= 200; i++ {
		lines = append(lines, fmt.Sprintf("line %d", i))
	}
	writeTestFile(t, c.Root(), "file.txt", strings.Join(lines, "\n")+"\n")
	t.Run("less", func(t *testing.T) {
		needProgram(t, "less")
		out := mustRun(t, c, "exec_command", map[string]any{"cmd": "less file.txt", "tty": true, "yield_time_ms": 1500})
		id := session(t, out)
		out = typeUntil(t, c, id, "", "Screen (a full-screen program")
		assert.Contains(t, out, "line 1\nline 2\n")
		assert.NotContains(t, out, "line 100")
		out = typeUntil(t, c, id, "G", "line 200")
		assert.NotContains(t, out[strings.LastIndex(out, "Screen"):], "line 2\n")
		typeUntil(t, c, id, "q", "Process exited with code 0")
	})
	t.Run("vi", func(t *testing.T) {
		needProgram(t, "vi")
		out := mustRun(t, c, "exec_command", map[string]any{"cmd": "vi -u NONE -i NONE file.txt", "tty": true, "yield_time_ms": 1500})
		id := session(t, out)
		out = typeUntil(t, c, id, "", "line 3")
		assert.Contains(t, out, "Screen (a full-screen program")
		typeUntil(t, c, id, "ggdGihello from vi\x1b", "hello from vi")
		typeUntil(t, c, id, ":wq\r", "Process exited with code 0")
		assert.Equal(t, "hello from vi\n", readTestFile(t, c.Root(), "file.txt"))
	})
}

func TestWriteStdinAfterTheEnd(t *testing.T) {
	c := newTools(t, WithTerminals())
	out := mustRun(t, c, "exec_command", map[string]any{"cmd": "sleep 0.2; echo bye", "yield_time_ms": 0})
	id := session(t, out)
	typeUntil(t, c, id, "", "Process exited")
	_, err := run(t, c, "write_stdin", map[string]any{"session_id": id, "chars": "x"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "the job has ended")
	_, err = run(t, c, "write_stdin", map[string]any{"session_id": 999})
	require.ErrorIs(t, err, ErrNoJob)
}
