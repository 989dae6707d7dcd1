package codetools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func sessionCall(t *testing.T, ct *CodeTools, ctx context.Context, args map[string]any) llmtoolkit.Result {
	t.Helper()
	return llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{ID: "c", Name: "bash", Arguments: args})
}

// TestBashSessionPersists: with WithBashSession, bash is Anthropic's
// bash_20250124: the working directory, variables and functions a command
// sets carry to the next; restart gives a fresh shell; a command reading
// its input reads nothing; each owner has a shell of its own.
func TestBashSessionPersists(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithBashSession())
	tool, ok := ct.LookupTool("bash")
	require.True(t, ok)
	assert.Equal(t, NativeBash, tool.Native)
	assert.Equal(t, []string{"command"}, tool.Commands.Names)
	require.NoError(t, os.Mkdir(filepath.Join(ct.Root(), "sub"), 0o755))
	ctx := context.Background()

	for _, step := range []struct{ command, want string }{
		{"cd sub && export GREETING=hello && f() { echo \"f:$1\"; }", ""},
		{"pwd; echo $GREETING; f x", filepath.Join(ct.Root(), "sub") + "\nhello\nf:x"},
		{"cat; echo read-nothing", "read-nothing"},
		{"echo 'a quote '\"'\"' and a \\ backslash'; printf 'two\\nlines\\n'", "a quote ' and a \\ backslash\ntwo\nlines"},
		{"if then", ""},
	} {
		res := sessionCall(t, ct, ctx, map[string]any{"command": step.command})
		if step.command == "if then" {
			require.True(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, "syntax error")
			assert.Contains(t, res.Content, "Command exited with code 2")
			continue
		}
		require.False(t, res.IsError, res.Content)
		if step.want == "" {
			assert.Equal(t, "(no output)", res.Content)
		} else {
			assert.Equal(t, step.want, res.Content, step.command)
		}
	}
	// The shell lives on after the syntax error.
	res := sessionCall(t, ct, ctx, map[string]any{"command": "echo $GREETING; exit 3"})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "hello")
	assert.Contains(t, res.Content, "The command ended the shell (exit code 3)")
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo \"[$GREETING]\"; pwd"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "A new bash session: the previous one ended")
	assert.Contains(t, res.Content, "[]\n"+ct.Root())

	sessionCall(t, ct, ctx, map[string]any{"command": "export X=1"})
	res = sessionCall(t, ct, ctx, map[string]any{"restart": true})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "tool has been restarted.", res.Content)
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo \"[$X]\""})
	assert.Equal(t, "[]", res.Content)

	// Another conversation has its own shell.
	sessionCall(t, ct, ctx, map[string]any{"command": "export MINE=1"})
	other := llmtoolkit.WithScope(ctx, func(sc *llmtoolkit.Scope) { sc.AgentID = "other" })
	res = sessionCall(t, ct, other, map[string]any{"command": "echo \"[$MINE]\""})
	assert.Equal(t, "[]", res.Content)
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo \"[$MINE]\""})
	assert.Equal(t, "[1]", res.Content)

	p := payloadOf[ProcessPayload](t, res, DisplayProcess)
	assert.Equal(t, "echo \"[$MINE]\"", p.Command)
	assert.Equal(t, "[1]", p.Output)
}

// TestBashSessionTimeoutKillsTheShell: a command still running at the
// timeout is killed with its shell, and everything it started with it;
// the next command runs in a fresh one. Output beyond bash's cap spills.
func TestBashSessionTimeoutKillsTheShell(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithBashSession(), WithBashTimeout(2*time.Second, time.Minute))
	ctx := context.Background()
	sessionCall(t, ct, ctx, map[string]any{"command": "export KEPT=1"})
	res := sessionCall(t, ct, ctx, map[string]any{"command": "(sleep 4; touch late) & echo started; sleep 30"})
	require.True(t, res.IsError)
	assert.Contains(t, res.Content, "started")
	assert.Contains(t, res.Content, "Command timed out after 2 seconds; the bash session was killed")
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo \"[$KEPT]\""})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "[]", res.Content)
	time.Sleep(3 * time.Second)
	assert.NoFileExists(t, filepath.Join(ct.Root(), "late"), "what the command started was killed with the shell")

	res = sessionCall(t, ct, ctx, map[string]any{"command": "seq 1 100000"})
	require.False(t, res.IsError)
	assert.Contains(t, res.Content, "100000\n\n[Showing lines ")
	assert.Contains(t, res.Content, "Full output: ")
	assert.False(t, strings.Contains(res.Content, "__llmtoolkit_done_"), "the marker is never shown")
}

func TestANSICQuote(t *testing.T) {
	assert.Equal(t, `$'a\'b\\c\x0ad\x09'`, ansiCQuote("a'b\\c\nd\t"))
	assert.Equal(t, `$'héllo'`, ansiCQuote("héllo"))
}

// TestBashSessionKeepsStderrApart: a persistent shell's answer shows the
// command's standard output, then its standard error after "stderr:",
// each in the order written and without the session's markers, as the
// shell's state carries on; a command that sends the shell's own stderr
// elsewhere costs a short wait, not the timeout; each stream is capped
// and spilled on its own; a command timed out shows the stderr it wrote.
func TestBashSessionKeepsStderrApart(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithBashSession(), WithBashTimeout(3*time.Second, time.Minute))
	ctx := context.Background()

	for _, step := range []struct {
		command, want string
		failed        bool
	}{
		{"cd /; echo out1; echo err1 >&2; echo out2; printf 'no newline' >&2", "out1\nout2\n\nstderr:\nerr1\nno newline", false},
		{"export KEPT=yes; echo warning >&2", "stderr:\nwarning", false},
		{"echo \"$KEPT $PWD\"", "yes /", false},
		{"echo bad >&2; false", "stderr:\nbad\n\nCommand exited with code 1", true},
		{"printf 'out without newline'", "out without newline", false},
		{"ls /nonexistent-llmtoolkit", "stderr:\nls: cannot access '/nonexistent-llmtoolkit': No such file or directory\n\nCommand exited with code 2", true},
	} {
		res := sessionCall(t, ct, ctx, map[string]any{"command": step.command})
		assert.Equal(t, step.failed, res.IsError, step.command)
		assert.Equal(t, step.want, res.Content, step.command)
	}

	res := sessionCall(t, ct, ctx, map[string]any{"command": "echo both; echo e >&2"})
	p := payloadOf[ProcessPayload](t, res, DisplayProcess)
	assert.Equal(t, "both\n\nstderr:\ne", p.Output)
	assert.Equal(t, int64(len("both\ne\n")), p.OutputBytes)

	// Output past the cap spills, each stream to its own file.
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo small; seq 1 100000 >&2"})
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasPrefix(res.Content, "small\n\nstderr:\n"), res.Content[:40])
	assert.Contains(t, res.Content, "100000\n\n[Showing lines ")
	assert.Contains(t, res.Content, "Full output: ")
	assert.NotContains(t, res.Content, "__llmtoolkit_done_")

	// The shell's own stderr sent away: the answer comes after a short
	// wait, the session lives on.
	began := time.Now()
	res = sessionCall(t, ct, ctx, map[string]any{"command": "exec 2>/dev/null; echo hi; echo gone >&2"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "hi", res.Content)
	assert.Less(t, time.Since(began), 3*time.Second, "a short wait, not the timeout")
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo \"$KEPT\""})
	assert.Equal(t, "yes", res.Content)
	res = sessionCall(t, ct, ctx, map[string]any{"restart": true, "command": "echo \"[$KEPT]\"; echo back >&2"})
	assert.Equal(t, "[]\n\nstderr:\nback", res.Content)

	// A command timed out shows the stderr it wrote.
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo partial; echo half-done >&2; sleep 30"})
	require.True(t, res.IsError)
	assert.True(t, strings.HasPrefix(res.Content, "partial\n\nstderr:\nhalf-done\n\nCommand timed out after 3 seconds; the bash session was killed"), res.Content)
	res = sessionCall(t, ct, ctx, map[string]any{"command": "echo after >&2"})
	assert.Equal(t, "stderr:\nafter", res.Content)
}
