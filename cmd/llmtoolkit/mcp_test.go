package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// mcpTimeout bounds each wait on the server: generous, the machine may be
// loaded.
const mcpTimeout = 60 * time.Second

// mcpProcess is `llmtoolkit mcp` run as a subprocess, spoken to line by
// line, malformed lines included.
type mcpProcess struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
}

func startMCP(t *testing.T, args ...string) *mcpProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*mcpTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, bin, append([]string{"mcp"}, args...)...)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	p := &mcpProcess{t: t, cmd: cmd, stdin: stdin, lines: make(chan string, 16), stderr: &lockedBuffer{}}
	cmd.Stderr = p.stderr
	require.NoError(t, cmd.Start())
	go func() {
		defer close(p.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 32<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() {
		_ = stdin.Close()
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server log:\n%s", p.stderr.String())
		}
	})
	return p
}

// send writes one line; the pipe to the process is buffered by the kernel,
// and the process reads as it goes, so a write does not block for long.
func (p *mcpProcess) send(line string) {
	p.t.Helper()
	_, err := io.WriteString(p.stdin, line+"\n")
	require.NoError(p.t, err, "the server stopped reading")
}

func (p *mcpProcess) recv() map[string]any {
	p.t.Helper()
	select {
	case line, ok := <-p.lines:
		require.True(p.t, ok, "the server closed its output instead of answering")
		var m map[string]any
		require.NoError(p.t, json.Unmarshal([]byte(line), &m), "answer %.200q", line)
		return m
	case <-time.After(mcpTimeout):
		p.t.Fatal("no answer from the server")
		return nil
	}
}

func (p *mcpProcess) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}`)
	require.Contains(p.t, p.recv(), "result")
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized","params":{}}`)
}

// readA calls read_file on a.txt and checks the answer.
func (p *mcpProcess) readA(id int) {
	p.t.Helper()
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"read_file","arguments":{"path":"a.txt"}}}`, id))
	ans := p.recv()
	require.Contains(p.t, ans, "result", "answer %v", ans)
	assert.Equal(p.t, float64(id), ans["id"])
	result := ans["result"].(map[string]any)
	assert.Contains(p.t, result["content"].([]any)[0].(map[string]any)["text"], "hello from a")
}

// wait closes the server's input and returns its exit code.
func (p *mcpProcess) wait() int {
	p.t.Helper()
	require.NoError(p.t, p.stdin.Close())
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(mcpTimeout):
		p.t.Fatal("the server did not exit when its input closed")
	}
	return p.cmd.ProcessState.ExitCode()
}

// TestMCPAnswersMalformedLines sends `llmtoolkit mcp` each kind of
// malformed line between two good requests, in one session: each is
// answered with its JSON-RPC error, the next request is served, and the
// server exits with status 0 when its input closes.
func TestMCPAnswersMalformedLines(t *testing.T) {
	tests := []struct {
		name string
		line string
		code float64
		id   any
	}{
		{"invalid JSON", `{"jsonrpc":"2.0","id":3,"method":`, -32700, nil},
		{"not JSON", `hello`, -32700, nil},
		{"batch array", `[{"jsonrpc":"2.0","id":7,"method":"ping"}]`, -32600, nil},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":9,"method":"ping"}`, -32600, float64(9)},
		{"object as id", `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}`, -32600, nil},
		{"not an object", `42`, -32600, nil},
		{"too long", `{"jsonrpc":"2.0","id":4,"method":"ping","params":{"x":"` + strings.Repeat("x", 17<<20) + `"}}`, -32600, nil},
	}
	p := startMCP(t, "--read-only", "--root", projectDir(t))
	p.initialize()
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p.t = t
			p.readA(2 * i)
			p.send(tt.line)
			ans := p.recv()
			require.Contains(t, ans, "error", "answer %v", ans)
			require.Contains(t, ans, "id")
			assert.Equal(t, tt.id, ans["id"])
			assert.Equal(t, tt.code, ans["error"].(map[string]any)["code"])
			p.readA(2*i + 1)
		})
	}
	p.t = t
	assert.Equal(t, 0, p.wait(), "exit status; log:\n%s", p.stderr.String())
	assert.Contains(t, p.stderr.String(), "malformed message answered with an error", "refused lines are logged")
}

// TestMCPBigEditSucceeds edits a 9 MiB file through `llmtoolkit mcp`, once
// at its first line and once over 3.5 MiB of lines: the edit's Display once
// held the file before and after, larger than an MCP frame, and the client
// was told a successful edit failed. Each edit is reported as succeeded,
// with a bounded text and Display, and the session goes on.
func TestMCPBigEditSucceeds(t *testing.T) {
	dir := projectDir(t)
	var b strings.Builder
	b.WriteString("first line to edit\n")
	for i := 0; b.Len() < 9<<20; i++ {
		fmt.Fprintf(&b, "line %d of a big file <&>\n", i)
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "big.txt"), []byte(b.String()), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 2*mcpTimeout)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--root", dir)
	var serverLog lockedBuffer
	cmd.Stderr = &serverLog
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	require.NoError(t, err)
	defer func() { _ = client.Close() }()

	res := llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{
		"path": "big.txt", "oldText": "first line to edit\n", "newText": "edited line\n",
	}})
	require.False(t, res.IsError, "a successful edit must not be reported as failed: %.300s\nserver log: %s", res.Content, serverLog.String())
	assert.Contains(t, res.Content, "Successfully replaced text in big.txt")
	data, err := os.ReadFile(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "edited line\n"))

	// An edit that changes 3.5 MiB of lines: its diff is far larger than
	// the 64 KiB the Display holds, and than a frame once both sides are
	// escaped; the answer stays small and says the edit succeeded.
	data, err = os.ReadFile(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	from := strings.Index(string(data), "line 1000 ")
	to := from + 7<<19
	to += strings.IndexByte(string(data[to:]), '\n') + 1
	oldText := string(data[from:to])
	newText := strings.ReplaceAll(oldText, "line ", "LINE ")
	res = llmtoolkit.Execute(ctx, client, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{
		"path": "big.txt", "oldText": oldText, "newText": newText,
	}})
	require.False(t, res.IsError, "a successful edit must not be reported as failed: %.300s\nserver log: %s", res.Content, serverLog.String())
	assert.Contains(t, res.Content, "Successfully replaced text in big.txt")
	assert.Less(t, len(res.Content), 1<<20, "the answer's text is bounded")
	require.NotNil(t, res.Display, "the Display is sent")
	display, err := json.Marshal(res.Display)
	require.NoError(t, err)
	assert.Less(t, len(display), 1<<20, "the Display holds a capped diff, not the file")
	data, err = os.ReadFile(filepath.Join(dir, "big.txt"))
	require.NoError(t, err)
	assert.Contains(t, string(data), newText)

	out, err := client.Resolve(ctx, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	require.NoError(t, err, "the session goes on")
	assert.Contains(t, out, "hello from a")
}
