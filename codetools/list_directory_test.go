package codetools

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestListDirectory(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "b.txt", "")
	writeTestFile(t, dir, "A.txt", "")
	writeTestFile(t, dir, ".env", "")
	writeTestFile(t, dir, "src/main.go", "")
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, symlink("src", dir, "code"))
	require.NoError(t, symlink("b.txt", dir, "c.txt"))
	require.NoError(t, symlink("nowhere", dir, "dangling"))

	assert.Equal(t, ".env\nA.txt\nb.txt\nc.txt -> b.txt\ncode/ -> src\ndangling -> nowhere\nempty/\nsrc/", mustRun(t, c, "list_directory", map[string]any{}))
	assert.Equal(t, "main.go", mustRun(t, c, "list_directory", map[string]any{"path": "src"}))
	assert.Equal(t, "main.go", mustRun(t, c, "list_directory", map[string]any{"path": "code"}), "a link to a folder inside the root")
	assert.Equal(t, "(empty directory)", mustRun(t, c, "list_directory", map[string]any{"path": "empty"}))

	_, err := run(t, c, "list_directory", map[string]any{"path": "nope"})
	assert.EqualError(t, err, "path not found: nope")
	_, err = run(t, c, "list_directory", map[string]any{"path": "b.txt"})
	assert.EqualError(t, err, "not a directory: b.txt")

	got := mustRun(t, c, "list_directory", map[string]any{"limit": 2})
	assert.Equal(t, ".env\nA.txt\n\n[Showing 2 of 8 entries (limit=2). Use limit=8 to see them all, or glob to narrow down.]", got)
}

func TestListDirectoryDefaultLimit(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t, WithListLimit(3))
	for i := range 5 {
		writeTestFile(t, dir, fmt.Sprintf("f%d", i), "")
	}
	assert.Contains(t, mustRun(t, c, "list_directory", map[string]any{}), "[Showing 3 of 5 entries (limit=3).")
}
