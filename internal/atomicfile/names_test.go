package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestWriteFileLongNames: a name of up to 255 bytes (the usual limit) is
// written and replaced; the temporary file's name does not grow with it.
func TestWriteFileLongNames(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	require.NoError(t, err)
	defer root.Close()
	for _, n := range []int{1, 200, 233, 234, 240, 254, 255} {
		name := strings.Repeat("n", n-1) + "x"
		require.NoError(t, WriteFile(root, name, []byte("one"), 0o644), "create a %d-byte name", n)
		require.NoError(t, WriteFile(root, name, []byte("two"), 0o644), "replace a %d-byte name", n)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err)
		assert.Equal(t, "two", string(got), "%d-byte name", n)
	}
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 7, "no temporary file left")
}

// TestWriteFileFolderSwappedDuringWrite swaps the target's folder for a
// symbolic link (to the outside, or to another folder inside the root)
// between the temporary file's creation and its rename: the write lands in
// the folder that was opened, no temporary file is left anywhere, and
// nothing is written outside.
func TestWriteFileFolderSwappedDuringWrite(t *testing.T) {
	for _, tt := range []struct {
		name   string
		target func(base string) string // where the swapped-in link points
	}{
		{"link to the outside", func(base string) string { return filepath.Join(base, "outside") }},
		{"link inside the root", func(string) string { return "other" }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			base := t.TempDir()
			dir, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
			for _, d := range []string{filepath.Join(dir, "sub"), filepath.Join(dir, "other"), outside} {
				require.NoError(t, os.MkdirAll(d, 0o755))
			}
			root, err := os.OpenRoot(dir)
			require.NoError(t, err)
			defer root.Close()

			sub, moved := filepath.Join(dir, "sub"), filepath.Join(dir, "sub-moved")
			testHookBeforeRename = func() {
				require.NoError(t, os.Rename(sub, moved))
				require.NoError(t, os.Symlink(tt.target(base), sub))
			}
			defer func() { testHookBeforeRename = nil }()
			err = WriteFile(root, filepath.Join("sub", "f.txt"), []byte("data"), 0o644)
			require.NoError(t, err)

			got, err := os.ReadFile(filepath.Join(moved, "f.txt"))
			require.NoError(t, err, "the write lands in the folder that was opened")
			assert.Equal(t, "data", string(got))
			for _, d := range []string{dir, outside} {
				require.NoError(t, filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
					require.NoError(t, err)
					assert.NotContains(t, e.Name(), ".tmp-", "temporary file left: %s", p)
					return nil
				}))
			}
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries, "nothing written outside")
		})
	}
}
