package agent_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
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
