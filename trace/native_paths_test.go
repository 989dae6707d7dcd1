package trace_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gorm.io/gorm"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/llmtoolkit/llmtoolkit/agent"
	"github.com/llmtoolkit/llmtoolkit/codetools"
	"github.com/llmtoolkit/llmtoolkit/trace"
)

// TestRowsHoldTheRealPaths: a row's result holds the canonical paths the
// call named, as its tool declares them: a patch touching three files
// (one through a link, one moved) those files, a memory command on
// /memories/x the real file in the memory folder, the text editor its
// file; a call the guard refused keeps the paths it named.
func TestRowsHoldTheRealPaths(t *testing.T) {
	forEachDB(t, func(t *testing.T, db *gorm.DB) {
		dir := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "src"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(dir, "secrets"), 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "a.go"), []byte("a\n"), 0o644))
		require.NoError(t, os.WriteFile(filepath.Join(dir, "src", "b.go"), []byte("b\n"), 0o644))
		require.NoError(t, os.Symlink("src", filepath.Join(dir, "lib")))
		code, err := codetools.New(dir, codetools.WithModelTools("claude-sonnet-4-5", "notes"), codetools.WithApplyPatch())
		require.NoError(t, err)
		defer code.Close()
		guard, err := agent.New(agent.Config{Mode: agent.ModeBypass, Deny: []agent.Rule{{Tool: "*", Argument: "path", Glob: "secrets/**"}}})
		require.NoError(t, err)
		rec := trace.Record(code, db)
		defer func() { require.NoError(t, rec.Close()) }()
		r := guard.Guard(rec)
		ctx := convCtx(t, 1)
		run := func(id, name string, args map[string]any) llmtoolkit.Result {
			return llmtoolkit.Execute(ctx, r, llmtoolkit.Call{ID: id, Name: name, Arguments: args})
		}
		res := run("p", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Update File: lib/a.go\n@@\n-a\n+A\n*** Update File: src/b.go\n*** Move to: src/c.go\n@@\n-b\n+B\n*** Add File: docs/new.md\n+n\n*** End Patch"})
		require.False(t, res.IsError, res.Content)
		res = run("m", "memory", map[string]any{"command": "create", "path": "/memories/todo.md", "file_text": "x\n"})
		require.False(t, res.IsError, res.Content)
		res = run("e", codetools.TextEditorName, map[string]any{"command": "view", "path": "lib/../src/a.go"})
		require.False(t, res.IsError, res.Content)
		res = run("d", "apply_patch", map[string]any{"patch": "*** Begin Patch\n*** Add File: secrets/k\n+x\n*** Add File: ok.md\n+x\n*** End Patch"})
		require.True(t, res.IsError)

		rows, err := trace.List(t.Context(), db, trace.Filter{TenantID: tenant, ConversationID: convA})
		require.NoError(t, err)
		byCall := map[string]trace.Trace{}
		for _, row := range rows {
			byCall[*row.CallID] = row
		}
		for id, want := range map[string][]any{
			"p": {"docs/new.md", "src/a.go", "src/b.go", "src/c.go"},
			"m": {"notes/todo.md"},
			"e": {"src/a.go"},
			"d": {"ok.md", "secrets/k"},
		} {
			row, ok := byCall[id]
			require.True(t, ok, "no row for %s", id)
			assert.Equal(t, want, row.Result["paths"], "row %s: %v", id, row.Result)
		}
		assert.Equal(t, trace.ResultError, byCall["d"].ResultType)
	})
}
