package codetools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAppendToFileRefusesHardLinks: a hard link planted in the root to a
// file outside it must not let append_to_file change the outside file; a
// file with one name is appended to as before.
func TestAppendToFileRefusesHardLinks(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	outside := filepath.Join(t.TempDir(), "secret.txt")
	require.NoError(t, os.WriteFile(outside, []byte("outside\n"), 0o644))
	if err := os.Link(outside, filepath.Join(dir, "hl.txt")); err != nil {
		t.Skipf("hard links unavailable: %v", err)
	}
	writeTestFile(t, dir, "in/a.txt", "a\n")
	require.NoError(t, os.Link(filepath.Join(dir, "in/a.txt"), filepath.Join(dir, "in/b.txt")))

	for _, p := range []string{"hl.txt", "in/a.txt", "in/b.txt"} {
		_, err := run(t, c, "append_to_file", map[string]any{"path": p, "content": "PWNED\n"})
		require.Error(t, err, p)
		assert.Contains(t, err.Error(), "hard link", p)
		assert.Contains(t, err.Error(), "write_file", p, "the error names the fix")
	}
	assert.Equal(t, "outside\n", readTestFile(t, filepath.Dir(outside), "secret.txt"))
	assert.Equal(t, "a\n", readTestFile(t, dir, "in/a.txt"))

	// Once the extra name is gone, appending works again.
	require.NoError(t, os.Remove(filepath.Join(dir, "in/b.txt")))
	mustRun(t, c, "append_to_file", map[string]any{"path": "in/a.txt", "content": "b\n"})
	assert.Equal(t, "a\nb\n", readTestFile(t, dir, "in/a.txt"))
}
