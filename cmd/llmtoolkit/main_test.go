package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/mcp"
)

// bin is the llmtoolkit binary built once by TestMain.
var bin string

func TestMain(m *testing.M) {
	os.Exit(buildAndRun(m))
}

func buildAndRun(m *testing.M) int {
	dir, err := os.MkdirTemp("", "llmtoolkit-cmd-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin = filepath.Join(dir, "llmtoolkit")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building llmtoolkit: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is the outcome of one run of the binary.
type result struct {
	stdout, stderr string
	code           int
}

// runBin runs the binary with args and stdin, with a generous timeout.
func runBin(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		code = exitErr.ExitCode()
	} else {
		require.NoError(t, err)
	}
	return result{stdout.String(), stderr.String(), code}
}

// projectDir returns a temporary root with a.txt in it.
func projectDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.txt"), []byte("hello from a\n"), 0o644))
	return dir
}

func TestToolsJSON(t *testing.T) {
	res := runBin(t, "", "tools", "--json", "--root", projectDir(t))
	require.Equal(t, 0, res.code, res.stderr)
	var tools []llmtoolkit.Tool
	require.NoError(t, json.Unmarshal([]byte(res.stdout), &tools))
	names := make([]string, 0, len(tools))
	for _, tool := range tools {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "read_file")
	assert.Contains(t, names, "write_file")
}

func TestToolsText(t *testing.T) {
	res := runBin(t, "", "tools", "--root", projectDir(t))
	require.Equal(t, 0, res.code, res.stderr)
	assert.Regexp(t, `(?m)^read_file\s+Read`, res.stdout)
}

func TestCall(t *testing.T) {
	dir := projectDir(t)
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string
		wantStderr string
	}{
		{"flags after", []string{"call", "read_file", `{"path":"a.txt"}`, "--root", dir}, "", 0, "hello from a", ""},
		{"flags before", []string{"call", "--root", dir, "read_file", `{"path":"a.txt"}`}, "", 0, "hello from a", ""},
		{"args from stdin", []string{"call", "read_file", "--root", dir}, `{"path":"a.txt"}`, 0, "hello from a", ""},
		{"dash reads stdin", []string{"call", "read_file", "-", "--root", dir}, `{"path":"a.txt"}`, 0, "hello from a", ""},
		{"missing file", []string{"call", "read_file", `{"path":"missing.txt"}`, "--root", dir}, "", 1, "missing.txt", ""},
		{"bad JSON", []string{"call", "read_file", `{"path":`, "--root", dir}, "", 1, "", "JSON"},
		{"unknown tool", []string{"call", "no_such_tool", "{}", "--root", dir}, "", 1, "read_file", ""},
		{"no tool name", []string{"call", "--root", dir}, "", 2, "", "missing the tool name"},
		{"bad flag", []string{"call", "--nope"}, "", 2, "", "llmtoolkit call --help"},
		{"bad root", []string{"call", "read_file", "{}", "--root", filepath.Join(dir, "nope")}, "", 1, "", "--root"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := runBin(t, tt.stdin, tt.args...)
			assert.Equal(t, tt.wantCode, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
			assert.Contains(t, res.stdout, tt.wantStdout)
			assert.Contains(t, res.stderr, tt.wantStderr)
			assert.NotContains(t, res.stderr, "goroutine ", "no stack traces")
		})
	}
}

func TestCallWriteFileFromStdin(t *testing.T) {
	dir := projectDir(t)
	res := runBin(t, `{"path":"sub/new.txt","content":"written via stdin\n"}`, "call", "write_file", "--root", dir)
	require.Equal(t, 0, res.code, "stdout: %s\nstderr: %s", res.stdout, res.stderr)
	data, err := os.ReadFile(filepath.Join(dir, "sub", "new.txt"))
	require.NoError(t, err)
	assert.Equal(t, "written via stdin\n", string(data))
}

func TestMCPServeAndTraces(t *testing.T) {
	dir := projectDir(t)
	db := filepath.Join(t.TempDir(), "t.db")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const conv = "0193a2b4-0000-7000-8000-000000000001"
	cmd := exec.Command(bin, "mcp", "--root", dir, "--trace-db", db, "--conversation", conv)
	var serverLog lockedBuffer
	cmd.Stderr = &serverLog
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	if err != nil {
		t.Fatalf("connecting: %v\nserver log: %s", err, serverLog.String())
	}

	names := make([]string, 0)
	for _, tool := range client.Tools() {
		names = append(names, tool.Name)
	}
	assert.Contains(t, names, "read_file")

	got, err := client.Resolve(ctx, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "a.txt"}})
	require.NoError(t, err)
	assert.Contains(t, got, "hello from a")

	_, err = client.Resolve(ctx, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": "missing.txt"}})
	var toolErr *mcp.ToolError
	require.ErrorAs(t, err, &toolErr)
	assert.Contains(t, toolErr.Message, "missing.txt")

	// A call refused by validation never reaches the tool, but is traced too.
	_, err = client.Resolve(ctx, llmtoolkit.Call{Name: "read_file", Arguments: map[string]any{"path": 5}})
	require.ErrorAs(t, err, &toolErr)
	assert.Contains(t, toolErr.Message, "invalid arguments")

	require.NoError(t, client.Close())
	// Close waits for the server process, so its traces are written.
	assert.NotContains(t, serverLog.String(), "level=ERROR")

	res := runBin(t, "", "traces", "--db", db)
	require.Equal(t, 0, res.code, res.stderr)
	lines := strings.Split(strings.TrimSpace(res.stdout), "\n")
	require.Len(t, lines, 4, res.stdout) // header and three calls
	assert.Contains(t, lines[0], "TOOL")
	assert.Regexp(t, `read_file\s+error\s.*"path":5`, lines[1], "newest first")
	assert.Regexp(t, `read_file\s+error\s.*missing\.txt`, lines[2])
	assert.Regexp(t, `read_file\s+ok\s.*a\.txt`, lines[3])

	res = runBin(t, "", "traces", "--db", db, "--limit", "1")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Len(t, strings.Split(strings.TrimSpace(res.stdout), "\n"), 2, res.stdout)

	res = runBin(t, "", "traces", "--db", db, "--conversation", conv)
	require.Equal(t, 0, res.code, res.stderr)
	assert.Equal(t, 3, strings.Count(res.stdout, conv), res.stdout)

	res = runBin(t, "", "traces", "--db", db, "--conversation", "0193a2b4-0000-7000-8000-000000000002")
	require.Equal(t, 0, res.code, res.stderr)
	assert.Len(t, strings.Split(strings.TrimSpace(res.stdout), "\n"), 1, "header only: %s", res.stdout)
}

func TestMCPReadOnly(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.Command(bin, "mcp", "--read-only", "--root", projectDir(t))
	client, err := mcp.Connect(ctx, mcp.CommandTransport(cmd))
	require.NoError(t, err)
	defer client.Close()
	_, hasRead := client.LookupTool("read_file")
	_, hasWrite := client.LookupTool("write_file")
	assert.True(t, hasRead)
	assert.False(t, hasWrite, "--read-only must hide write_file")
}

func TestTracesMissingDB(t *testing.T) {
	res := runBin(t, "", "traces", "--db", filepath.Join(t.TempDir(), "none.db"))
	assert.Equal(t, 1, res.code)
	assert.Contains(t, res.stderr, "no trace database")
}

func TestRunHelp(t *testing.T) {
	for _, args := range [][]string{
		{"--help"}, {"-h"}, {"tools", "--help"}, {"call", "-h"}, {"mcp", "--help"}, {"traces", "-h"}, {"checkpoints", "--help"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, 0, code)
			assert.Contains(t, stdout.String(), "Usage: llmtoolkit")
			assert.Empty(t, stderr.String())
		})
	}
}

func TestVersion(t *testing.T) {
	for _, arg := range []string{"--version", "-version", "version"} {
		res := runBin(t, "", arg)
		require.Equal(t, 0, res.code, res.stderr)
		assert.Regexp(t, `^llmtoolkit \S+ \(library \S+, go1\.\d+`, res.stdout)
		assert.Empty(t, res.stderr)
	}
}

func TestRunUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{}, "Usage: llmtoolkit"},
		{[]string{"tools", "--bogus"}, "flag provided but not defined"},
		{[]string{"traces", "--limit", "x"}, "invalid value"},
		{[]string{"tools", "extra"}, `unexpected argument "extra"`},
		{[]string{"mcp", "--conversation", "nope"}, "is not a UUID"},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tt.args, strings.NewReader(""), &stdout, &stderr)
			assert.Equal(t, 2, code)
			assert.Contains(t, stderr.String(), tt.want)
			assert.Empty(t, stdout.String())
		})
	}
}

func TestParseArgsInterleaved(t *testing.T) {
	fs := newFlagSet("x")
	root := fs.String("root", "", "")
	var stdout, stderr bytes.Buffer
	pos, _, ok := parseArgs(fs, "", []string{"a", "--root", "r", "b", "--", "--root"}, &stdout, &stderr)
	require.True(t, ok)
	assert.Equal(t, []string{"a", "b", "--root"}, pos)
	assert.Equal(t, "r", *root)
}

// lockedBuffer is a bytes.Buffer safe to read while a process writes to it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
