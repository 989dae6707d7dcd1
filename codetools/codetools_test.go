package codetools

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/llmtoolkit/llmtoolkit"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestNewRefusesBadRoots(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := writeTestFile(t, dir, "f.txt", "x")
	for _, root := range []string{"", filepath.Join(dir, "missing"), file} {
		c, err := New(root)
		assert.Error(t, err, root)
		assert.Nil(t, c)
	}
	c, err := New(dir)
	require.NoError(t, err)
	require.NoError(t, c.Close())
	_, err = run(t, c, "read_file", map[string]any{"path": "f.txt"})
	assert.Error(t, err, "calls after Close fail")
}

func TestFileToolDefinitions(t *testing.T) {
	t.Parallel()
	_, c := newTestTools(t)
	want := []string{"read_file", "write_file", "edit_file", "multi_edit", "append_to_file", "list_directory", "tree", "file_info"}
	var names []string
	for _, tool := range c.Tools() {
		names = append(names, tool.Name)
	}
	require.GreaterOrEqual(t, len(names), len(want))
	assert.Equal(t, want, names[:len(want)], "the file tools come first, in order")

	readOnly := map[string]bool{"read_file": true, "list_directory": true, "tree": true, "file_info": true}
	destructive := map[string]bool{"write_file": true, "edit_file": true, "multi_edit": true}
	for _, name := range want {
		tool, ok := c.LookupTool(name)
		require.True(t, ok, name)
		require.NoError(t, tool.Validate(), name)
		assert.Greater(t, len(tool.Description), 150, "%s: an LLM-ready description", name)
		require.NotNil(t, tool.Annotations, name)
		assert.Equal(t, readOnly[name], tool.Annotations.ReadOnly, name)
		assert.Equal(t, destructive[name], tool.Annotations.Destructive, name)
		props := tool.Parameters["properties"].(map[string]any)
		require.Contains(t, props, "path", name)
		for prop, schema := range props {
			assert.NotEmpty(t, schema.(map[string]any)["description"], "%s.%s has a description", name, prop)
		}
		if name != "list_directory" && name != "tree" {
			assert.Contains(t, tool.Parameters["required"], "path", name)
		}
	}
}

func TestBadArguments(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", "hello\n")
	for _, tt := range []struct {
		name string
		args map[string]any
	}{
		{"read_file", map[string]any{}},
		{"read_file", map[string]any{"path": 3}},
		{"read_file", map[string]any{"path": "f.txt", "offset": "2"}},
		{"read_file", map[string]any{"path": "f.txt", "offset": 0}},
		{"read_file", map[string]any{"path": "f.txt", "limit": 1.5}},
		{"read_file", map[string]any{"path": "f.txt", "bogus": true}},
		{"write_file", map[string]any{"path": "g.txt"}},
		{"write_file", map[string]any{"path": "g.txt", "content": 42}},
		{"edit_file", map[string]any{"path": "f.txt", "oldText": "hello"}},
		{"multi_edit", map[string]any{"path": "f.txt", "edits": "hello"}},
		{"multi_edit", map[string]any{"path": "f.txt", "edits": []any{map[string]any{"oldText": "a", "newText": "b", "x": 1}}}},
		{"list_directory", map[string]any{"limit": -1}},
		{"tree", map[string]any{"depth": "deep"}},
		{"file_info", map[string]any{"path": nil}},
	} {
		_, err := run(t, c, tt.name, tt.args)
		require.Error(t, err, "%s %v", tt.name, tt.args)
		assert.ErrorIs(t, err, llmtoolkit.ErrInvalidArguments, "%s %v", tt.name, tt.args)
	}
	_, err := run(t, c, "no_such_tool", map[string]any{})
	assert.ErrorIs(t, err, llmtoolkit.ErrUnknownTool)
	res := execute(c, "no_such_tool", nil)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "read_file")

	assert.Equal(t, "hello\n", readTestFile(t, dir, "f.txt"))
	_, err = os.Stat(filepath.Join(dir, "g.txt"))
	assert.True(t, os.IsNotExist(err), "nothing written")
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "f.txt", "x")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := c.Resolve(ctx, llmtoolkit.Call{Name: "write_file", Arguments: map[string]any{"path": "f.txt", "content": "y"}})
	assert.True(t, errors.Is(err, context.Canceled))
	assert.Equal(t, "x", readTestFile(t, dir, "f.txt"))
}
