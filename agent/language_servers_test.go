package agent_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/internal/testkit"
)

// TestPlanModeRefusesRenameNotNavigation: plan mode classifies the
// language-server tools by effect: rename writes (refused), the others
// read (run).
func TestPlanModeRefusesRenameNotNavigation(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "a.go"), []byte("package a\n"), 0o644))
	code, err := codetools.New(dir, codetools.WithLanguageServers(codetools.LanguageServer{
		Name: "none", Command: []string{"llmtoolkit-no-such-server"}, Languages: map[string]string{".go": "go"}}))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	plan := newPerms(t, agent.Config{Mode: agent.ModePlan})
	args := map[string]any{"path": "a.go", "line": 1, "symbol": "a"}
	res := llmtoolkit.Execute(t.Context(), plan.Guard(code), llmtoolkit.Call{ID: "1", Name: "rename",
		Arguments: map[string]any{"path": "a.go", "line": 1, "symbol": "a", "newName": "b"}})
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	for _, name := range []string{"definition", "references", "hover"} {
		res = llmtoolkit.Execute(t.Context(), plan.Guard(code), llmtoolkit.Call{ID: "2", Name: name, Arguments: args})
		assert.NotErrorIs(t, res.Err, llmtoolkit.ErrDenied, name)
	}
	data, err := os.ReadFile(filepath.Join(dir, "a.go"))
	require.NoError(t, err)
	assert.Equal(t, "package a\n", string(data))
}

// TestRenameChecksEveryFile: every file a rename edits is a write decision
// as multi_edit's on it would be: a rule, a hook or the callback refusing
// any one of them refuses the whole rename, and nothing is written.
func TestRenameChecksEveryFile(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	denyB := func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
		if call.Name == "multi_edit" && call.Arguments["path"] == "b.fake" {
			return agent.Decision{Deny: true, Message: "not b.fake"}
		}
		return agent.Decision{}
	}
	cases := []struct {
		name    string
		cfg     agent.Config
		refused bool
	}{
		{"no rule", agent.Config{Mode: agent.ModeAcceptEdits}, false},
		{"a rule on another file", agent.Config{Mode: agent.ModeAcceptEdits, Deny: []agent.Rule{{Tool: "multi_edit", Argument: "path", Glob: "c.fake"}}}, false},
		{"a multi_edit rule", agent.Config{Mode: agent.ModeAcceptEdits, Deny: []agent.Rule{{Tool: "multi_edit", Argument: "path", Glob: "b.fake"}}}, true},
		{"a hook", agent.Config{Mode: agent.ModeAcceptEdits, Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{denyB}}}, true},
		{"the callback", agent.Config{CanUseTool: denyB}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range []string{"a.fake", "b.fake"} {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), []byte("old "+f+"\n"), 0o644))
			}
			code, err := codetools.New(dir, codetools.WithLanguageServers(codetools.LanguageServer{Name: "fake", Command: []string{exe},
				Env: []string{testkit.FakeLanguageServerEnv + "=ok"}, Languages: map[string]string{".fake": "fake"}}))
			require.NoError(t, err)
			t.Cleanup(func() { code.Close() })
			perms := newPerms(t, tc.cfg)
			res := llmtoolkit.Execute(t.Context(), perms.Guard(code), llmtoolkit.Call{ID: "1", Name: "rename",
				Arguments: map[string]any{"path": "a.fake", "line": 1, "symbol": "old", "newName": "sibling"}})
			a, b := readFile(t, filepath.Join(dir, "a.fake")), readFile(t, filepath.Join(dir, "b.fake"))
			if !tc.refused {
				require.False(t, res.IsError, res.Content)
				assert.Equal(t, []string{"sibling a.fake\n", "sibling b.fake\n"}, []string{a, b})
				return
			}
			require.True(t, res.IsError, res.Content)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, "the rename would change b.fake")
			assert.Equal(t, []string{"old a.fake\n", "old b.fake\n"}, []string{a, b}, "nothing written")
		})
	}
}

// TestLanguageServersHideEveryToolsDenyRules: a deny rule naming one tool
// (read_file) hides its paths from the language servers that every tool's
// calls reach: an edit's server, started by write_file's call, which the
// rule does not name, cannot open the denied files; without the rule it
// does (the control).
func TestLanguageServersHideEveryToolsDenyRules(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		deny []agent.Rule
		want string
	}{
		{"no rule", nil, "read: TOPSECRET|no sandbox backend runs here"},
		// No sandbox here: the server is not started at all.
		{"read_file's rule", []agent.Rule{{Tool: "read_file", Argument: "path", Glob: "secret/**"}}, "cannot read|no sandbox backend runs here"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			require.NoError(t, os.MkdirAll(filepath.Join(dir, "secret"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "secret", "key.txt"), []byte("TOPSECRET"), 0o644))
			code, err := codetools.New(dir, codetools.WithLanguageServers(codetools.LanguageServer{Name: "fake", Command: []string{exe},
				Env: []string{testkit.FakeLanguageServerEnv + "=ok"}, Languages: map[string]string{".fake": "fake"}}),
				codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 20 * time.Second}))
			require.NoError(t, err)
			t.Cleanup(func() { code.Close() })
			p := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Deny: tc.deny})
			res := llmtoolkit.Execute(t.Context(), p.Guard(code), llmtoolkit.Call{ID: "1", Name: "write_file",
				Arguments: map[string]any{"path": "a.fake", "content": "READ secret/key.txt\n"}})
			require.False(t, res.IsError, res.Content)
			assert.Regexp(t, tc.want, res.Content)
			if tc.deny != nil {
				assert.NotContains(t, res.Content, "TOPSECRET")
			}
		})
	}
}

// TestLanguageServersHideWhatReadFileRefuses: the differential test of
// the servers' view. For rules of every spelling (a glob, a regular
// expression, a PreToolUse hook, the CanUseTool callback), the files the
// server process cannot open are exactly those read_file is refused,
// compared file by file over the tree (a hard link's two names included).
func TestLanguageServersHideWhatReadFileRefuses(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	files := map[string]string{
		"open.txt": "OPEN", "src/main.txt": "OPEN", "secret/deep/a.txt": "SECRET", "keys/x.pem": "SECRET",
		"keys/x.pub": "OPEN", "notes/hook-1.txt": "SECRET", "notes/plain.txt": "OPEN", "cb/cb-1.txt": "SECRET", "cb/other.txt": "OPEN",
		"linked.txt": "SECRET",
	}
	for rel, text := range files {
		require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644))
	}
	require.NoError(t, os.Link(filepath.Join(dir, "linked.txt"), filepath.Join(dir, "src", "linked-too.txt")))
	files["src/linked-too.txt"] = "SECRET"
	denies := func(word string) agent.PreToolUseHook {
		return func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			if p, _ := call.Arguments["path"].(string); call.Name == "read_file" && strings.Contains(p, word) {
				return agent.Decision{Deny: true, Message: "not " + word}
			}
			return agent.Decision{}
		}
	}
	p := newPerms(t, agent.Config{
		Deny: []agent.Rule{
			{Tool: "read_file", Argument: "path", Glob: "secret/**"},
			{Tool: "read_file", Argument: "path", Regexp: `\.pem$`},
		},
		Hooks:      agent.Hooks{PreToolUse: []agent.PreToolUseHook{denies("hook-")}},
		CanUseTool: agent.CanUseTool(denies("cb-")),
	})
	code, err := codetools.New(dir, codetools.WithLanguageServers(codetools.LanguageServer{Name: "fake", Command: []string{exe},
		Env: []string{testkit.FakeLanguageServerEnv + "=ok"}, Languages: map[string]string{".fake": "fake"}}),
		codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 20 * time.Second}))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	tools := p.Guard(code)

	var paths, refused, unreadable []string
	for rel, text := range files {
		paths = append(paths, rel)
		if text == "SECRET" {
			refused = append(refused, rel) // what the rules are meant to refuse: the test's own control
		}
	}
	sort.Strings(paths)
	sort.Strings(refused)
	var readFileRefuses []string
	for i, rel := range paths {
		res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "r" + rel, Name: "read_file", Arguments: map[string]any{"path": rel}})
		if res.IsError {
			readFileRefuses = append(readFileRefuses, rel)
		}
		res = llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "w" + rel, Name: "write_file",
			Arguments: map[string]any{"path": "probe.fake", "content": "READ " + rel + "\n" + strings.Repeat("\n", i)}})
		require.False(t, res.IsError, res.Content)
		if strings.Contains(res.Content, "no sandbox backend runs here") {
			t.Skip("no sandbox backend runs here: no server starts while something is hidden")
		}
		switch {
		case strings.Contains(res.Content, "cannot read:"):
			unreadable = append(unreadable, rel)
		case strings.Contains(res.Content, "read: "+files[rel]):
		default:
			t.Fatalf("%s: no answer from the server: %s", rel, res.Content)
		}
	}
	assert.Equal(t, refused, readFileRefuses, "read_file's refusals (the control)")
	assert.Equal(t, readFileRefuses, unreadable, "the files the server cannot open are not those read_file is refused")
}

// TestLanguageServersHideNewFilesOfEveryRule: files bash makes after the
// server started, in a folder .gitignore ignores, refused to read_file by
// a regular expression, a PreToolUse hook and the CanUseTool callback
// (no glob): the server cannot open them at the next call, and opens the
// one beside them no rule refuses (it does see new files).
func TestLanguageServersHideNewFilesOfEveryRule(t *testing.T) {
	exe, err := os.Executable()
	require.NoError(t, err)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("build/\n"), 0o644))
	denies := func(word string) agent.PreToolUseHook {
		return func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			if p, _ := call.Arguments["path"].(string); call.Name == "read_file" && strings.Contains(p, word) {
				return agent.Decision{Deny: true, Message: "not " + word}
			}
			return agent.Decision{}
		}
	}
	p := newPerms(t, agent.Config{
		Deny:       []agent.Rule{{Tool: "read_file", Argument: "path", Regexp: `\.pem$`}},
		Hooks:      agent.Hooks{PreToolUse: []agent.PreToolUseHook{denies("hook-")}},
		CanUseTool: agent.CanUseTool(denies("cb-")),
	})
	code, err := codetools.New(dir, codetools.WithLanguageServers(codetools.LanguageServer{Name: "fake", Command: []string{exe},
		Env: []string{testkit.FakeLanguageServerEnv + "=ok"}, Languages: map[string]string{".fake": "fake"}}),
		codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 20 * time.Second}))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	tools := p.Guard(code)
	names := []string{"build/new/x.pem", "build/new/hook-1.txt", "build/new/cb-1.txt", "build/new/plain.txt"}
	probe := func(i int) string {
		res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: fmt.Sprint("probe", i), Name: "write_file", Arguments: map[string]any{"path": "probe.fake",
			"content": "READ " + strings.Join(names, "\nREAD ") + "\n" + strings.Repeat("\n", i)}})
		require.False(t, res.IsError, res.Content)
		if strings.Contains(res.Content, "no sandbox backend runs here") {
			t.Skip("no sandbox backend runs here: no server starts while something is hidden")
		}
		return res.Content
	}
	assert.Equal(t, len(names), strings.Count(probe(0), "cannot read:"), "before: no such files")
	res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "bash", Name: "bash", Arguments: map[string]any{"command": "mkdir -p build/new && " +
		"echo SECRET-PEM > build/new/x.pem && echo SECRET-HOOK > build/new/hook-1.txt && echo SECRET-CB > build/new/cb-1.txt && echo OPEN-PLAIN > build/new/plain.txt"}})
	require.False(t, res.IsError, res.Content)
	for _, rel := range names {
		res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "r" + rel, Name: "read_file", Arguments: map[string]any{"path": rel}})
		assert.Equal(t, !strings.HasSuffix(rel, "plain.txt"), res.IsError, "read_file %s (the control): %s", rel, res.Content)
	}
	out := probe(1)
	assert.NotContains(t, out, "SECRET", "a new file read_file is refused was readable to the server")
	assert.Equal(t, 3, strings.Count(out, "cannot read:"), out)
	assert.Contains(t, out, "read: OPEN-PLAIN", "the server does not see new files at all")
}

// TestGoplsHidesWhatEveryRuleRefuses: real gopls, with the package
// secret refused to read_file by a regular expression, a hook or the
// callback (no glob), cannot import it: the edit of its importer reports
// the import it cannot load; without a rule (the control) it reports
// nothing.
func TestGoplsHidesWhatEveryRuleRefuses(t *testing.T) {
	if testing.Short() {
		t.Skip("real language servers: not in -short")
	}
	bin := testkit.LanguageServer(t, "LLMTOOLKIT_GOPLS", "gopls")
	refusesSecret := func(_ context.Context, call llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
		if p, _ := call.Arguments["path"].(string); call.Name == "read_file" && strings.HasPrefix(p, "secret") {
			return agent.Decision{Deny: true, Message: "not secret"}
		}
		return agent.Decision{}
	}
	for _, tc := range []struct {
		name string
		cfg  agent.Config
		want string
	}{
		{"no rule", agent.Config{}, "reports no errors or warnings in b/b.go"},
		{"regexp", agent.Config{Deny: []agent.Rule{{Tool: "read_file", Argument: "path", Regexp: `^secret(/|$)`}}}, "b/b.go:3:8: error"},
		{"hook", agent.Config{Hooks: agent.Hooks{PreToolUse: []agent.PreToolUseHook{refusesSecret}}}, "b/b.go:3:8: error"},
		{"callback", agent.Config{CanUseTool: agent.CanUseTool(refusesSecret)}, "b/b.go:3:8: error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			for rel, text := range map[string]string{
				"go.mod":      "module example.com/m\n\ngo 1.22\n",
				"secret/s.go": "package secret\n\n// TopSecretFunc is hidden.\nfunc TopSecretFunc() int { return 42 }\n",
				"b/b.go":      "package b\n\nimport \"example.com/m/secret\"\n\nvar X int = secret.TopSecretFunc()\n",
			} {
				require.NoError(t, os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755))
				require.NoError(t, os.WriteFile(filepath.Join(dir, rel), []byte(text), 0o644))
			}
			server := codetools.DefaultLanguageServers()[0]
			require.Equal(t, "gopls", server.Name)
			server.Command = []string{bin}
			server.Env = []string{"GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}
			code, err := codetools.New(dir, codetools.WithLanguageServers(server),
				codetools.WithLanguageServerLimits(codetools.LanguageServerLimits{Settle: 90 * time.Second, Quiet: 500 * time.Millisecond}))
			require.NoError(t, err)
			t.Cleanup(func() { code.Close() })
			tools := newPerms(t, tc.cfg).Guard(code)
			res := llmtoolkit.Execute(t.Context(), tools, llmtoolkit.Call{ID: "e", Name: "edit_file", Arguments: map[string]any{"path": "b/b.go", "oldText": "var X int =", "newText": "var X =  "}})
			require.False(t, res.IsError, res.Content)
			if strings.Contains(res.Content, "no sandbox backend runs here") {
				t.Skip("no sandbox backend runs here")
			}
			assert.Contains(t, res.Content, tc.want)
			assert.NotContains(t, res.Content, "TopSecretFunc is hidden")
		})
	}
}
