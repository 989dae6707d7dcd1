package agent_test

import (
	"context"
	"os"
	"path/filepath"
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
		{"no rule", nil, "read: TOPSECRET"},
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
