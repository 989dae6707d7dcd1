package codetools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func shellCall(commands []string, extra map[string]any) llmtoolkit.Call {
	cmds := make([]any, len(commands))
	for i, c := range commands {
		cmds[i] = c
	}
	args := map[string]any{"commands": cmds}
	for k, v := range extra {
		args[k] = v
	}
	return llmtoolkit.Call{ID: "c1", Name: ShellName, Arguments: args}
}

func shellAnswerOf(t *testing.T, res llmtoolkit.Result) shellAnswer {
	t.Helper()
	require.False(t, res.IsError, res.Content)
	var a shellAnswer
	require.NoError(t, json.Unmarshal([]byte(res.Content), &a), res.Content)
	return a
}

// TestShellRunsEachCommand: each command runs with bash -c in the root,
// stdout and stderr apart, its exit code its own (a failing command is no
// error of the call); a timeout ends the call, the commands after it not
// run; the Display holds a process payload per command run.
func TestShellRunsEachCommand(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithShell())
	res := llmtoolkit.Execute(context.Background(), ct, shellCall([]string{
		"echo out; echo err >&2", "pwd; exit 3", "sleep 30", "touch never-run",
	}, map[string]any{"timeout_ms": float64(3000)}))
	a := shellAnswerOf(t, res)
	require.Len(t, a.Output, 3, res.Content)
	assert.Equal(t, "out", a.Output[0].Stdout)
	assert.Equal(t, "err", a.Output[0].Stderr)
	assert.Equal(t, "exit", a.Output[0].Outcome.Type)
	assert.Equal(t, 0, *a.Output[0].Outcome.ExitCode)
	assert.Equal(t, ct.Root(), a.Output[1].Stdout)
	assert.Equal(t, 3, *a.Output[1].Outcome.ExitCode)
	assert.Equal(t, shellOutcome{Type: "timeout"}, a.Output[2].Outcome)
	assert.NoFileExists(t, filepath.Join(ct.Root(), "never-run"))

	p := payloadOf[ShellPayload](t, res, DisplayShell)
	require.Len(t, p.Commands, 3)
	assert.Equal(t, "echo out; echo err >&2", p.Commands[0].Command)
	assert.Equal(t, "out\nerr", p.Commands[0].Output)
	assert.Equal(t, 3, p.Commands[1].ExitCode)
	assert.True(t, p.Commands[2].TimedOut)
}

// TestShellOutputLength: max_output_length keeps that many characters of
// stdout and stderr together (their ends), and is echoed; bash's caps and
// spill file hold beyond it.
func TestShellOutputLength(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithShell())
	res := llmtoolkit.Execute(context.Background(), ct, shellCall([]string{
		"printf 'ééééé12345'; printf 'abcdefghij' >&2",
		"seq 1 100000",
	}, map[string]any{"max_output_length": float64(10)}))
	a := shellAnswerOf(t, res)
	assert.Equal(t, 10, a.MaxOutputLength)
	assert.Equal(t, "12345", a.Output[0].Stdout)
	assert.Equal(t, "fghij", a.Output[0].Stderr)
	assert.Equal(t, 10, utf8.RuneCountInString(a.Output[1].Stdout))

	res = llmtoolkit.Execute(context.Background(), ct, shellCall([]string{"seq 1 100000"}, nil))
	a = shellAnswerOf(t, res)
	m := strings.LastIndex(a.Output[0].Stdout, "Full output: ")
	require.Positive(t, m, "the spill file is named")
	spill := strings.TrimSuffix(a.Output[0].Stdout[m+len("Full output: "):], "]")
	data, err := os.ReadFile(spill)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(string(data), "1\n2\n3\n"))
	assert.LessOrEqual(t, len(a.Output[0].Stdout), 51*1024)
}

// TestShellCommandsCheckedAsBash: the shell's commands are declared as
// command lines (llmtoolkit.Tool.Commands), each checked as bash's.
func TestShellCommandsCheckedAsBash(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithShell())
	tool, ok := ct.LookupTool(ShellName)
	require.True(t, ok)
	require.NotNil(t, tool.Commands)
	assert.Equal(t, []string{"commands"}, tool.Commands.Lists)
	assert.Empty(t, tool.Native, "native only through WithModelTools for GPT-5")
	gpt := newTools(t, WithModelTools("gpt-5.1", ""))
	tool, _ = gpt.LookupTool(ShellName)
	assert.Equal(t, NativeShell, tool.Native)
	tool, _ = gpt.LookupTool("apply_patch")
	assert.Equal(t, NativeApplyPatch, tool.Native)
}

func TestCutStreams(t *testing.T) {
	for _, tc := range []struct {
		out, err         string
		n                int
		wantOut, wantErr string
	}{
		{"abc", "de", 10, "abc", "de"},
		{"abcdef", "", 3, "def", ""},
		{"", "abcdef", 3, "", "def"},
		{"abcdef", "uvwxyz", 4, "ef", "yz"},
		{"ab", "uvwxyz", 4, "ab", "yz"},
		{"abcdef", "z", 4, "def", "z"},
		{"日本語です", "", 2, "です", ""},
	} {
		o, e := cutStreams(tc.out, tc.err, tc.n)
		assert.Equal(t, tc.wantOut, o, "%+v", tc)
		assert.Equal(t, tc.wantErr, e, "%+v", tc)
	}
}
