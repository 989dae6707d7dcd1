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
