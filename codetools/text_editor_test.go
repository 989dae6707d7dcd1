package codetools

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTextEditor(t *testing.T) {
	root, c := newTestTools(t, WithTextEditor(0))
	tool, ok := c.LookupTool(TextEditorName)
	require.True(t, ok)
	assert.Equal(t, NativeTextEditor, tool.Native)
	writeTestFiles(t, root, map[string]string{"a.py": "def f():\n    return 1\n\nx = 1\nx = 1\n", "win.txt": "one\r\ntwo\r\n", "src/pkg/deep/z.go": "z\n"})
	ed := func(args map[string]any) (string, error) { return run(t, c, TextEditorName, args) }

	for _, tc := range []struct {
		name string
		args map[string]any
		want string
		err  string
	}{
		{name: "view numbers lines", args: map[string]any{"command": "view", "path": "a.py"}, want: "1: def f():\n2:     return 1\n3: \n4: x = 1\n5: x = 1"},
		{name: "view_range", args: map[string]any{"command": "view", "path": "a.py", "view_range": []any{2.0, 3.0}}, want: "2:     return 1\n3: "},
		{name: "view_range to the end", args: map[string]any{"command": "view", "path": "a.py", "view_range": []any{4.0, -1.0}}, want: "4: x = 1\n5: x = 1"},
		{name: "bad view_range", args: map[string]any{"command": "view", "path": "a.py", "view_range": []any{4.0, 9.0}}, err: "Invalid view_range [4, 9]"},
		{name: "missing", args: map[string]any{"command": "view", "path": "nope.txt"}, err: "Error: File not found: nope.txt"},
		{name: "twice", args: map[string]any{"command": "str_replace", "path": "a.py", "old_str": "x = 1", "new_str": "y"},
			err: "Error: Found 2 matches for replacement text. Please provide more context to make a unique match."},
		{name: "none", args: map[string]any{"command": "str_replace", "path": "a.py", "old_str": "zzz", "new_str": "y"},
			err: "Error: No match found for replacement. Please check your text and try again."},
		{name: "outside", args: map[string]any{"command": "create", "path": "../x", "file_text": "x"}, err: "outside the working directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := ed(tc.args)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, out)
		})
	}

	out, err := ed(map[string]any{"command": "view", "path": "src"})
	require.NoError(t, err)
	assert.Contains(t, out, "up to 2 levels deep in src")
	assert.Contains(t, out, "pkg")
	assert.Contains(t, out, "deep")
	assert.NotContains(t, out, "z.go", "two levels deep, no more")

	out, err = ed(map[string]any{"command": "str_replace", "path": "a.py", "old_str": "return 1", "new_str": "return 2"})
	require.NoError(t, err)
	assert.Contains(t, out, "Successfully replaced text at exactly one location.")
	_, err = ed(map[string]any{"command": "insert", "path": "win.txt", "insert_line": 1.0, "insert_text": "middle"})
	require.NoError(t, err)
	assert.Equal(t, "one\r\nmiddle\r\ntwo\r\n", readTestFile(t, root, "win.txt"))
	_, err = ed(map[string]any{"command": "insert", "path": "a.py", "insert_line": 0.0, "insert_text": "# top\n"})
	require.NoError(t, err)
	_, err = ed(map[string]any{"command": "insert", "path": "a.py", "insert_line": 99.0, "insert_text": "x"})
	assert.ErrorContains(t, err, "Invalid insert_line 99")
	assert.Equal(t, "# top\ndef f():\n    return 2\n\nx = 1\nx = 1\n", readTestFile(t, root, "a.py"))
	_, err = ed(map[string]any{"command": "create", "path": "new/b.txt", "file_text": "b\n"})
	require.NoError(t, err)
	assert.Equal(t, "b\n", readTestFile(t, root, "new/b.txt"))

	small := newTools(t, WithTextEditor(10))
	writeTestFiles(t, small.Root(), map[string]string{"long.txt": "aaaaaaaaaa\nbbbbbbbbbb\n"})
	out, err = run(t, small, TextEditorName, map[string]any{"command": "view", "path": "long.txt"})
	require.NoError(t, err)
	assert.Contains(t, out, "[truncated at 10 characters")
}
