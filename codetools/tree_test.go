package codetools

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTree(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, "README.md", strings.Repeat("r", 100))
	writeTestFile(t, dir, "src/main.go", strings.Repeat("m", 2048))
	writeTestFile(t, dir, "src/util/u.go", strings.Repeat("u", 10))
	writeTestFile(t, dir, "src/util/deep/d.go", strings.Repeat("d", 5))
	writeTestFile(t, dir, ".git/HEAD", "ref: refs/heads/main\n")
	writeTestFile(t, dir, ".git/objects/x", strings.Repeat("x", 9999))
	require.NoError(t, os.Mkdir(filepath.Join(dir, "empty"), 0o755))
	require.NoError(t, symlink("src", dir, "code"))

	got := mustRun(t, c, "tree", map[string]any{})
	assert.Equal(t, strings.Join([]string{
		"./ (2.1KB)",
		"├── code -> src",
		"├── empty/ (0B)",
		"├── README.md (100B)",
		"└── src/ (2.0KB)",
		"    ├── main.go (2.0KB)",
		"    └── util/ (15B)",
		"        ├── deep/ (5B, 1 more inside)",
		"        └── u.go (10B)",
		"",
		"4 directories, 4 files",
		"",
		`[Depth limit 3 reached: folders marked "more inside" were not expanded. Use depth=4, or call tree on one of them.]`,
	}, "\n"), got)

	got = mustRun(t, c, "tree", map[string]any{"path": "src", "depth": 5})
	assert.Equal(t, strings.Join([]string{
		"src/ (2.0KB)",
		"├── main.go (2.0KB)",
		"└── util/ (15B)",
		"    ├── deep/ (5B)",
		"    │   └── d.go (5B)",
		"    └── u.go (10B)",
		"",
		"2 directories, 3 files",
	}, "\n"), got)

	got = mustRun(t, c, "tree", map[string]any{"limit": 3, "depth": 9})
	assert.Equal(t, strings.Join([]string{
		"./ (2.1KB)",
		"├── code -> src",
		"├── empty/ (0B)",
		"├── README.md (100B)",
		"",
		"1 directory, 2 files",
		"",
		"[Entry limit 3 reached: 6 more entries not shown. Use limit=9, or call tree on a subfolder.]",
	}, "\n"), got)

	_, err := run(t, c, "tree", map[string]any{"path": "nope"})
	assert.EqualError(t, err, "path not found: nope")
	_, err = run(t, c, "tree", map[string]any{"path": "README.md"})
	assert.EqualError(t, err, "not a directory: README.md")
}

func TestTreeGitignore(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t)
	writeTestFile(t, dir, ".gitignore", "*.log\nbuild/\n!keep.log\n")
	writeTestFile(t, dir, "app.log", "x")
	writeTestFile(t, dir, "keep.log", "kk")
	writeTestFile(t, dir, "build/out.bin", strings.Repeat("b", 5000))
	writeTestFile(t, dir, "src/a.go", "aaa")
	writeTestFile(t, dir, "src/gen/.gitignore", "*.pb.go\n!api.pb.go\n")
	writeTestFile(t, dir, "src/gen/x.pb.go", "x")
	writeTestFile(t, dir, "src/gen/api.pb.go", "api")
	writeTestFile(t, dir, "src/gen/debug.log", "d")

	got := mustRun(t, c, "tree", map[string]any{})
	for _, want := range []string{".gitignore", "keep.log (2B)", "a.go (3B)", "api.pb.go (3B)", "gen/ (22B)"} {
		assert.Contains(t, got, want)
	}
	for _, unwanted := range []string{"app.log", "build", "x.pb.go", "debug.log"} {
		assert.NotContains(t, got, unwanted)
	}
	assert.True(t, strings.HasPrefix(got, "./ (50B)"), got)

	// From a subfolder, the root's .gitignore still applies.
	got = mustRun(t, c, "tree", map[string]any{"path": "src/gen"})
	assert.Equal(t, "src/gen/ (22B)\n├── .gitignore (19B)\n└── api.pb.go (3B)\n\n0 directories, 2 files", got)
}

func TestTreeScanLimit(t *testing.T) {
	t.Parallel()
	dir, c := newTestTools(t, WithTreeMaxScan(10))
	for i := range 20 {
		writeTestFile(t, dir, fmt.Sprintf("f%02d", i), "x")
	}
	got := mustRun(t, c, "tree", map[string]any{})
	assert.Contains(t, got, "[The walk stopped after 10 entries: the listing is partial and folder sizes are lower bounds.]")
	assert.Contains(t, got, "0 directories, 10 files")
}
