package codetools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/llmtoolkit/llmtoolkit"
)

func TestMemoryTool(t *testing.T) {
	root, c := newTestTools(t, WithMemory(".memories"))
	tool, ok := c.LookupTool("memory")
	require.True(t, ok)
	assert.Equal(t, NativeMemory, tool.Native)
	writeTestFiles(t, root, map[string]string{"project.txt": "not a memory\n"})
	require.NoError(t, os.MkdirAll(filepath.Join(root, ".memories"), 0o755))
	require.NoError(t, symlink("..", root, ".memories/up"))
	mem := func(args map[string]any) (string, error) { return run(t, c, "memory", args) }

	_, err := mem(map[string]any{"command": "create", "path": "/memories/notes.md", "file_text": "- likes Go\n"})
	require.NoError(t, err)
	assert.Equal(t, "- likes Go\n", readTestFile(t, root, ".memories/notes.md"))
	out, err := mem(map[string]any{"command": "view", "path": "/memories/notes.md"})
	require.NoError(t, err)
	assert.Equal(t, "1: - likes Go", out)
	_, err = mem(map[string]any{"command": "str_replace", "path": "/memories/notes.md", "old_str": "Go", "new_str": "Go and Rust"})
	require.NoError(t, err)
	_, err = mem(map[string]any{"command": "insert", "path": "/memories/notes.md", "insert_line": 1.0, "insert_text": "- tabs"})
	require.NoError(t, err)
	assert.Equal(t, "- likes Go and Rust\n- tabs\n", readTestFile(t, root, ".memories/notes.md"))
	out, err = mem(map[string]any{"command": "rename", "old_path": "/memories/notes.md", "new_path": "/memories/people/me.md"})
	require.NoError(t, err)
	assert.Equal(t, "Renamed /memories/notes.md to /memories/people/me.md", out)
	_, err = mem(map[string]any{"command": "delete", "path": "/memories/people"})
	require.NoError(t, err)
	assert.NoDirExists(t, filepath.Join(root, ".memories/people"))

	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"command": "view", "path": "/etc/passwd"}, "is not under /memories"},
		{map[string]any{"command": "view", "path": "/memoriesX/a"}, "is not under /memories"},
		{map[string]any{"command": "create", "path": "/memories/../project.txt", "file_text": "x"}, ""},
		{map[string]any{"command": "view", "path": "/memories/up/project.txt"}, "leads out of /memories"},
		{map[string]any{"command": "delete", "path": "/memories"}, "cannot be deleted"},
		{map[string]any{"command": "rename", "old_path": "/memories/up/project.txt", "new_path": "/memories/p.txt"}, "leads out of /memories"},
	} {
		_, err := mem(tc.args)
		if tc.want == "" { // ".." stops at /memories: the file lands inside it
			require.NoError(t, err)
			assert.Equal(t, "x", readTestFile(t, root, ".memories/project.txt"))
			continue
		}
		require.Error(t, err, "%v", tc.args)
		assert.Contains(t, err.Error(), tc.want)
	}
	assert.Equal(t, "not a memory\n", readTestFile(t, root, "project.txt"))
	canon, err := tool.Paths.Canonical(context.Background(), "path", "/memories/a/../b.md")
	require.NoError(t, err)
	assert.Equal(t, ".memories/b.md", canon)
}

// TestMemoryDisplay: each memory command shows a memory Display naming
// the /memories path and the real file inside the memory folder (both
// ends of a rename), with the diff of an edit.
func TestMemoryDisplay(t *testing.T) {
	t.Parallel()
	ct := newTools(t, WithMemory("notes"))
	ctx := context.Background()
	run := func(args map[string]any) MemoryPayload {
		t.Helper()
		res := llmtoolkit.Execute(ctx, ct, llmtoolkit.Call{Name: "memory", Arguments: args})
		require.False(t, res.IsError, res.Content)
		return payloadOf[MemoryPayload](t, res, DisplayMemory)
	}
	p := run(map[string]any{"command": "create", "path": "/memories/a.md", "file_text": "one\n"})
	assert.Equal(t, MemoryPayload{Command: "create", Path: "/memories/a.md", File: "notes/a.md"}, p)
	p = run(map[string]any{"command": "str_replace", "path": "/memories/a.md", "old_str": "one", "new_str": "two"})
	assert.Equal(t, "notes/a.md", p.File)
	assert.Contains(t, p.Diff, "+two")
	assert.Equal(t, 1, p.Added)
	assert.Equal(t, 1, p.Removed)
	p = run(map[string]any{"command": "view", "path": "/memories/a.md"})
	assert.Equal(t, MemoryPayload{Command: "view", Path: "/memories/a.md", File: "notes/a.md"}, p)
	p = run(map[string]any{"command": "rename", "old_path": "/memories/a.md", "new_path": "/memories/old/b.md"})
	assert.Equal(t, MemoryPayload{Command: "rename", Path: "/memories/a.md", File: "notes/a.md", NewPath: "/memories/old/b.md", NewFile: "notes/old/b.md"}, p)
	p = run(map[string]any{"command": "delete", "path": "/memories/old"})
	assert.Equal(t, MemoryPayload{Command: "delete", Path: "/memories/old", File: "notes/old"}, p)
}
