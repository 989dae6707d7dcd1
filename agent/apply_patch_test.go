package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
)

// TestApplyPatchIsOneDecisionPerPath: a patch is as many path decisions as
// the files it touches. A deny rule on "path" refuses a patch when one of
// its files (a move's destination too, through a link) is denied; an allow
// rule lets it run without asking only when all are; plan mode refuses it.
func TestApplyPatchIsOneDecisionPerPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("a\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", "key"), []byte("KEY\n"), 0o644))
	require.NoError(t, os.Symlink("secrets", filepath.Join(dir, "alias")))
	code, err := codetools.New(dir, codetools.WithApplyPatch())
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	call := func(p *agent.Permissions, patch string) llmtoolkit.Result {
		return llmtoolkit.Execute(t.Context(), p.Guard(code), llmtoolkit.Call{ID: "1", Name: "apply_patch", Arguments: map[string]any{"patch": patch}})
	}
	touchSecret := map[string]string{
		"update":         "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** Update File: secrets/key\n@@\n-KEY\n+X\n*** End Patch",
		"move onto":      "*** Begin Patch\n*** Update File: src/a.go\n*** Move to: alias/a.go\n@@\n-a\n+b\n*** End Patch",
		"delete":         "*** Begin Patch\n*** Delete File: alias/key\n*** End Patch",
		"add through ..": "*** Begin Patch\n*** Add File: src/../secrets/new\n+x\n*** End Patch",
	}
	deny := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}}})
	for name, patch := range touchSecret {
		t.Run("denied/"+name, func(t *testing.T) {
			res := call(deny, patch)
			require.True(t, res.IsError, res.Content)
			assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
			assert.Contains(t, res.Content, "secrets/**")
		})
	}
	assert.Equal(t, "a\n", readFile(t, filepath.Join(dir, "src", "a.go")))
	assert.Equal(t, "KEY\n", readFile(t, filepath.Join(dir, "secrets", "key")))

	// An allow rule covers a patch only when it covers every file.
	asked := 0
	allow := newPerms(t, agent.Config{Allow: []agent.Rule{{Tool: "apply_patch", Argument: "path", Glob: "src/**"}},
		CanUseTool: func(_ context.Context, _ llmtoolkit.Call, _ llmtoolkit.Tool) agent.Decision {
			asked++
			return agent.Deny("asked")
		}})
	res := call(allow, touchSecret["update"])
	require.True(t, res.IsError)
	assert.Equal(t, 1, asked, "a patch that also touches secrets/key is not covered by src/**")
	res = call(allow, "*** Begin Patch\n*** Update File: src/a.go\n@@\n-a\n+b\n*** Add File: src/n.go\n+n\n*** End Patch")
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, 1, asked)
	assert.Equal(t, "b\n", readFile(t, filepath.Join(dir, "src", "a.go")))

	plan := newPerms(t, agent.Config{Mode: agent.ModePlan})
	res = call(plan, "*** Begin Patch\n*** Add File: src/p.go\n+p\n*** End Patch")
	require.True(t, res.IsError)
	assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
	assert.NoFileExists(t, filepath.Join(dir, "src", "p.go"))
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	require.NoError(t, err)
	return string(data)
}

// TestTextEditorHoldsPathRules: Anthropic's text editor shape is one path
// decision per call, on the path it opens: a deny rule on "path" holds for
// each command, through a link too.
func TestTextEditorHoldsPathRules(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "secrets", "key"), []byte("KEY\n"), 0o644))
	require.NoError(t, os.Symlink("secrets", filepath.Join(dir, "alias")))
	code, err := codetools.New(dir, codetools.WithTextEditor(0))
	require.NoError(t, err)
	t.Cleanup(func() { code.Close() })
	p := newPerms(t, agent.Config{Mode: agent.ModeAcceptEdits, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}}})
	for _, args := range []map[string]any{
		{"command": "view", "path": "secrets/key"},
		{"command": "view", "path": "alias"},
		{"command": "str_replace", "path": "alias/key", "old_str": "KEY", "new_str": "X"},
		{"command": "create", "path": "secrets/new", "file_text": "x"},
		{"command": "insert", "path": "./secrets/key", "insert_line": 0, "insert_text": "x"},
	} {
		res := llmtoolkit.Execute(t.Context(), p.Guard(code), llmtoolkit.Call{ID: "1", Name: codetools.TextEditorName, Arguments: args})
		require.True(t, res.IsError, "%v: %s", args, res.Content)
		assert.ErrorIs(t, res.Err, llmtoolkit.ErrDenied)
		assert.NotContains(t, res.Content, "KEY")
	}
	assert.Equal(t, "KEY\n", readFile(t, filepath.Join(dir, "secrets", "key")))
	assert.NoFileExists(t, filepath.Join(dir, "secrets", "new"))
}
