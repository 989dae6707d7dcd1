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
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// The fake language server is this test binary (testkit.FakeLanguageServer).
func TestMain(m *testing.M) {
	testkit.FakeLanguageServer()
	os.Exit(m.Run())
}

// fakeServer is a LanguageServer running the fake in mode, for .fake files.
func fakeServer(t *testing.T, mode string) LanguageServer {
	exe, err := os.Executable()
	require.NoError(t, err)
	return LanguageServer{Name: "fake", Command: []string{exe}, Env: []string{testkit.FakeLanguageServerEnv + "=" + mode},
		Languages: map[string]string{".fake": "fake"}}
}

// TestChangeToolsReportDiagnostics: each of the four change tools tells
// the server and appends what it reports, errors first; the fix clears it.
func TestChangeToolsReportDiagnostics(t *testing.T) {
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
	res := execute(c, "write_file", map[string]any{"path": "a.fake", "content": "MEH\nok\nBAD\n"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Wrote 11 bytes to a.fake\n\nfake reports 1 error and 1 warning in a.fake:\n"+
		"a.fake:3:1: error [bad]: BAD is not allowed\na.fake:1:1: warning [7]: MEH is discouraged", res.Content)
	p := payloadOf[DiagnosticsPayload](t, res, DisplayDiagnostics)
	assert.Equal(t, 1, p.Errors)
	require.Len(t, p.Items, 2)
	assert.Equal(t, Diagnostic{Path: "a.fake", Line: 3, Column: 1, Severity: "error", Code: "bad", Source: "fake", Message: "BAD is not allowed"}, p.Items[0])

	res = execute(c, "edit_file", map[string]any{"path": "a.fake", "oldText": "BAD", "newText": "good"})
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasSuffix(res.Content, "\n\nfake reports 0 errors and 1 warning in a.fake:\na.fake:1:1: warning [7]: MEH is discouraged"), res.Content)
	d := payloadOf[DiffPayload](t, res, DisplayDiff)
	require.NotNil(t, d.Diagnostics)
	assert.Equal(t, 1, d.Diagnostics.Warnings)

	res = execute(c, "multi_edit", map[string]any{"path": "a.fake", "edits": []any{map[string]any{"oldText": "MEH", "newText": "fine"}}})
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasSuffix(res.Content, "\n\nfake reports no errors or warnings in a.fake."), res.Content)

	res = execute(c, "append_to_file", map[string]any{"path": "a.fake", "content": "BAD again\n"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "a.fake:4:1: error [bad]: BAD is not allowed")

	// A file no server handles: the answer is as without servers.
	res = execute(c, "write_file", map[string]any{"path": "b.txt", "content": "BAD"})
	assert.Equal(t, "Wrote 3 bytes to b.txt", res.Content)
}

func TestDiagnosticsOffPerToolAndMissingServer(t *testing.T) {
	c := newTools(t, WithLanguageServers(fakeServer(t, "ok"), LanguageServer{Name: "none", Command: []string{"llmtoolkit-no-such-server"},
		Languages: map[string]string{".none": "none"}}), WithoutDiagnostics("write_file"))
	res := execute(c, "write_file", map[string]any{"path": "a.fake", "content": "BAD\n"})
	assert.Equal(t, "Wrote 4 bytes to a.fake", res.Content)
	assert.Nil(t, res.Display)
	res = execute(c, "edit_file", map[string]any{"path": "a.fake", "oldText": "BAD", "newText": "BAD BAD"})
	assert.Contains(t, res.Content, "fake reports 1 error and 0 warnings")
	// A missing binary: no diagnostics, no error, no note.
	res = execute(c, "write_file", map[string]any{"path": "x.none", "content": "BAD\n"})
	assert.False(t, res.IsError)
	res = execute(c, "edit_file", map[string]any{"path": "x.none", "oldText": "BAD", "newText": "ok"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, "Successfully replaced text in x.none.\n\n-1 BAD\n+1 ok", res.Content)
	assert.Nil(t, payloadOf[DiffPayload](t, res, DisplayDiff).Diagnostics)
}

// TestHostileServersDoNotHoldEdits: a server that hangs at initialize,
// crashes, floods diagnostics or writes 1 GiB to stderr leaves the edit
// answered within its settle time, with a note.
func TestHostileServersDoNotHoldEdits(t *testing.T) {
	for _, mode := range []string{"hang", "crash", "flood", "stderr"} {
		t.Run(mode, func(t *testing.T) {
			settle := time.Second
			if mode == "flood" { // 4,001 publishes to read, by a sandboxed test binary (-race in CI's race pass)
				settle = 5 * time.Second
			}
			c := newTools(t, WithLanguageServers(fakeServer(t, mode)),
				WithLanguageServerLimits(LanguageServerLimits{Settle: settle, ShutdownTimeout: 200 * time.Millisecond, StartTimeout: 500 * time.Millisecond}))
			writeTestFile(t, c.Root(), "a.fake", "x\n")
			for i, text := range []string{"BAD\n", "BAD BAD\n"} {
				start := time.Now()
				res := execute(c, "write_file", map[string]any{"path": "a.fake", "content": text})
				require.False(t, res.IsError, res.Content)
				assert.Less(t, time.Since(start), 8*time.Second, "call %d", i)
				switch mode {
				case "hang":
					assert.Contains(t, res.Content, "No diagnostics for a.fake: fake", "call %d", i)
				case "crash":
					if i == 1 {
						assert.Contains(t, res.Content, "stopped", "call %d", i)
					}
				case "flood":
					if i == 0 {
						assert.Contains(t, res.Content, "(980 more not shown)")
					}
				case "stderr": // still writing its 1 GiB, or done and answering
					assert.Regexp(t, `No diagnostics for a.fake: fake|fake reports 1 error`, res.Content, "call %d", i)
				}
			}
			start := time.Now()
			require.NoError(t, c.Close())
			assert.Less(t, time.Since(start), 5*time.Second)
		})
	}
}

// goModule writes a module of two packages for gopls.
func goModule(t *testing.T) string {
	dir := t.TempDir()
	writeTestFiles(t, dir, map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.22\n",
		"a/a.go": "package a\n\n// N is a number.\nfunc N() int { return 1 }\n",
		"b/b.go": "package b\n\nimport \"example.com/m/a\"\n\nvar X int = a.N()\n",
	})
	return dir
}

func goplsServer(t testing.TB) LanguageServer {
	bin := testkit.LanguageServer(t, "LLMTOOLKIT_GOPLS", "gopls")
	s := DefaultLanguageServers()[0]
	require.Equal(t, "gopls", s.Name)
	s.Command = []string{bin}
	s.Env = []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
	return s
}

// Real servers: the tests against them (gopls, pyright,
// typescript-language-server; skipped in -short, so run once in CI's test
// stage and not in its race pass) run in parallel with each other, each on
// a root and a server of its own: most of their time is spent waiting for
// a server's start and its diagnostics to settle. They do not share one
// server: each changes the same files of its module and asks what the
// server says after, which a shared server would mix.

// realServerCase is one real server: a file, an edit that breaks its
// types, and what the error says.
type realServerCase struct {
	name, file, good, bad, want string
	server                      func(t *testing.T) LanguageServer
	files                       map[string]string
}

func TestRealServersReportTypeErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("real language servers: not in -short")
	}
	t.Parallel() // a real server: see "Real servers" in language_servers_test.go
	cases := []realServerCase{
		{name: "gopls", file: "b/b.go", good: "var X int = a.N()", bad: `var X string = a.N()`, want: "cannot use a.N()", server: func(t *testing.T) LanguageServer { return goplsServer(t) }},
		{name: "pyright", file: "m.py", good: "x: int = 1", bad: `x: int = "one"`, want: `"Literal['one']" is not assignable`,
			server: func(t *testing.T) LanguageServer {
				s := DefaultLanguageServers()[1]
				s.Command = []string{testkit.LanguageServer(t, "LLMTOOLKIT_PYRIGHT", "pyright-langserver"), "--stdio"}
				return s
			}, files: map[string]string{"m.py": "x: int = 1\n", "pyrightconfig.json": "{}\n"}},
		{name: "typescript-language-server", file: "m.ts", good: "let x: number = 1;", bad: `let x: number = "one";`, want: "not assignable to type 'number'",
			server: func(t *testing.T) LanguageServer {
				s := DefaultLanguageServers()[2]
				s.Command = []string{testkit.LanguageServer(t, "LLMTOOLKIT_TYPESCRIPT_LANGUAGE_SERVER", "typescript-language-server"), "--stdio"}
				return s
			}, files: map[string]string{"m.ts": "let x: number = 1;\nexport { x };\n", "tsconfig.json": `{"compilerOptions": {"strict": true}}` + "\n"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			server := tc.server(t)
			var dir string
			if tc.files == nil {
				dir = goModule(t)
			} else {
				dir = t.TempDir()
				writeTestFiles(t, dir, tc.files)
			}
			c, err := New(dir, WithLanguageServers(server), WithLanguageServerLimits(LanguageServerLimits{Settle: 90 * time.Second, Quiet: 300 * time.Millisecond}))
			require.NoError(t, err)
			defer c.Close()
			start := time.Now()
			res := llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{"path": tc.file, "oldText": tc.good, "newText": tc.bad}})
			require.False(t, res.IsError, res.Content)
			t.Logf("%s: first diagnostics after %s", tc.name, time.Since(start).Round(time.Millisecond))
			assert.Contains(t, res.Content, tc.want)
			d := payloadOf[DiffPayload](t, res, DisplayDiff).Diagnostics
			require.NotNil(t, d, res.Content)
			require.NotEmpty(t, d.Items, res.Content)
			assert.Equal(t, "error", d.Items[0].Severity)
			assert.Equal(t, filepath.ToSlash(tc.file), d.Items[0].Path)

			res = llmtoolkit.Execute(context.Background(), c, llmtoolkit.Call{Name: "edit_file", Arguments: map[string]any{"path": tc.file, "oldText": tc.bad, "newText": tc.good}})
			require.False(t, res.IsError, res.Content)
			assert.Contains(t, res.Content, "reports no errors or warnings in "+tc.file, res.Content)
		})
	}
}

func TestApplyPatchReportsDiagnostics(t *testing.T) {
	c := newTools(t, WithApplyPatch(), WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
	res := execute(c, "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: p.fake\n+ok\n+BAD\n*** Add File: q.txt\n+BAD\n*** End Patch"})
	require.False(t, res.IsError, res.Content)
	assert.True(t, strings.HasSuffix(res.Content, "\n\nfake reports 1 error and 0 warnings in p.fake:\np.fake:2:1: error [bad]: BAD is not allowed"), res.Content)
}

func TestTextEditorReportsDiagnostics(t *testing.T) {
	c := newTools(t, WithTextEditor(0), WithLanguageServers(fakeServer(t, "ok")), WithLanguageServerLimits(LanguageServerLimits{Settle: 20 * time.Second}))
	edit := func(args map[string]any) string {
		res := execute(c, "str_replace_based_edit_tool", args)
		require.False(t, res.IsError, res.Content)
		return res.Content
	}
	out := edit(map[string]any{"command": "create", "path": "e.fake", "file_text": "BAD\n"})
	assert.Equal(t, "File created successfully at: e.fake\n\nfake reports 1 error and 0 warnings in e.fake:\ne.fake:1:1: error [bad]: BAD is not allowed", out)
	out = edit(map[string]any{"command": "str_replace", "path": "e.fake", "old_str": "BAD", "new_str": "ok"})
	assert.True(t, strings.HasSuffix(out, "\n\nfake reports no errors or warnings in e.fake."), out)
	out = edit(map[string]any{"command": "insert", "path": "e.fake", "insert_line": 1, "insert_text": "MEH\n"})
	assert.Contains(t, out, "e.fake:2:1: warning [7]: MEH is discouraged")
}
