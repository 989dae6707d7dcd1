package codetools

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBashChangesReportDiagnostics: the files a bash command changed, and
// only those, are told to the language server, and their diagnostics
// follow the command's output; WithoutDiagnostics("bash") turns it off.
func TestBashChangesReportDiagnostics(t *testing.T) {
	cases := []struct {
		name, command string
		off           bool
		want          string // the answer's end; "" for no diagnostics
	}{
		{name: "a new file", command: "printf 'ok\\nBAD\\n' > new.fake",
			want: "\n\nfake reports 1 error and 0 warnings in new.fake:\nnew.fake:2:1: error [bad]: BAD is not allowed"},
		{name: "sed -i", command: "sed -i 's/good/BAD/' a.fake",
			want: "\n\nfake reports 1 error and 0 warnings in a.fake:\na.fake:1:1: error [bad]: BAD is not allowed"},
		{name: "a file of no server", command: "echo BAD > a.txt"},
		{name: "nothing changed", command: "cat b.fake > /dev/null; echo done"},
		{name: "a removal", command: "rm a.fake"},
		{name: "off", command: "sed -i 's/good/BAD/' a.fake", off: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			opts := []Option{WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second})}
			if tc.off {
				opts = append(opts, WithoutDiagnostics("bash"))
			}
			c := newTools(t, opts...)
			// b.fake has an error already: it is not told, the command does not change it.
			writeTestFiles(t, c.Root(), map[string]string{"a.fake": "good\n", "b.fake": "BAD\n", "ignored/x.fake": "ok\n", ".gitignore": "ignored/\n"})
			res := execute(c, "bash", map[string]any{"command": tc.command + "; echo BAD > ignored/x.fake"})
			require.False(t, res.IsError, res.Content)
			assert.NotContains(t, res.Content, "b.fake")
			assert.NotContains(t, res.Content, "ignored/x.fake", "what .gitignore ignores is not watched")
			if tc.want == "" {
				assert.NotContains(t, res.Content, "reports", res.Content)
				return
			}
			assert.True(t, strings.HasSuffix(res.Content, tc.want), res.Content)
		})
	}
}

// TestBashChangesWithGopls: a type error a bash command writes is in its
// answer, from a real gopls; the command that fixes it clears it.
func TestBashChangesWithGopls(t *testing.T) {
	if testing.Short() {
		t.Skip("a real gopls: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	server := goplsServer(t)
	dir := goModule(t)
	c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second, Quiet: 300 * time.Millisecond}))
	require.NoError(t, err)
	defer c.Close()
	res := execute(c, "bash", map[string]any{"command": "sed -i 's/var X int/var X string/' b/b.go"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "gopls reports 1 error and 0 warnings in b/b.go:\nb/b.go:5:")
	assert.Contains(t, res.Content, "cannot use a.N()")
	res = execute(c, "bash", map[string]any{"command": "sed -i 's/var X string/var X int/' b/b.go"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "gopls reports no errors or warnings in b/b.go.", res.Content)
	assert.NotContains(t, res.Content, "a/a.go")
}
