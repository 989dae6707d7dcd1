package codetools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWriteFile(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	got := mustRun(t, c, "write_file", map[string]any{"path": "deep/er/new.txt", "content": "héllo\n"})
	assert.Equal(t, "Wrote 7 bytes to deep/er/new.txt", got)
	assert.Equal(t, "héllo\n", readTestFile(t, dir, "deep/er/new.txt"))

	// No Display for a new file; a diff when it replaces one.
	res := execute(c, "write_file", map[string]any{"path": "fresh.txt", "content": "a\n"})
	require.False(t, res.IsError, res.Content)
	assert.Nil(t, res.Display)

	p := writeTestFile(t, dir, "script.sh", "one\ntwo\n")
	require.NoError(t, os.Chmod(p, 0o755))
	res = execute(c, "write_file", map[string]any{"path": "script.sh", "content": "one\nTWO\n"})
	require.False(t, res.IsError, res.Content)
	assert.Equal(t, DiffPayload{
		Path: "script.sh", Diff: "--- a/script.sh\n+++ b/script.sh\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO",
		Added: 1, Removed: 1, FirstChangedLine: 2, Replacements: 0,
	}, payloadOf[DiffPayload](t, res, DisplayDiff))
	info, err := os.Stat(p)
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o755), info.Mode().Perm(), "mode kept")

	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range entries {
		assert.NotContains(t, e.Name(), ".tmp-", "no temporary file left")
	}
}

func TestWriteFileRefusals(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
	for _, tt := range []struct {
		path, err string
	}{
		{"sub", "sub is a directory; write_file writes files"},
		{".", ". is the working directory itself, not a file"},
		{"", "path is empty; give a path relative to the working directory"},
		{"../out.txt", `path "../out.txt" is outside the working directory`},
		{"a\x00b", `path "a\x00b" contains a NUL byte`},
	} {
		_, err := run(t, c, "write_file", map[string]any{"path": tt.path, "content": "x"})
		assert.EqualError(t, err, tt.err, tt.path)
	}
	_, err := os.Stat(filepath.Join(filepath.Dir(dir), "out.txt"))
	assert.True(t, os.IsNotExist(err))
}

func TestWriteFileThroughSymlinkInsideRoot(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "real/target.txt", "old")
	require.NoError(t, os.Symlink("real/target.txt", filepath.Join(dir, "link.txt")))
	mustRun(t, c, "write_file", map[string]any{"path": "link.txt", "content": "new"})
	assert.Equal(t, "new", readTestFile(t, dir, "real/target.txt"))
	info, err := os.Lstat(filepath.Join(dir, "link.txt"))
	require.NoError(t, err)
	assert.True(t, info.Mode()&os.ModeSymlink != 0, "the link is kept")
}

func TestAppendToFile(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	assert.Equal(t, "Appended 4 bytes to logs/a.log", mustRun(t, c, "append_to_file", map[string]any{"path": "logs/a.log", "content": "one\n"}))
	mustRun(t, c, "append_to_file", map[string]any{"path": "logs/a.log", "content": "two\n"})
	assert.Equal(t, "one\ntwo\n", readTestFile(t, dir, "logs/a.log"))
	_, err := run(t, c, "append_to_file", map[string]any{"path": "logs", "content": "x"})
	assert.EqualError(t, err, "logs is a directory; append_to_file writes files")
}
