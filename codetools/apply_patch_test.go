package codetools

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestApplyPatchIsOptIn(t *testing.T) {
	_, ok := newTools(t).LookupTool("apply_patch")
	assert.False(t, ok, "the default set stays the 12 tools")
	assert.Len(t, newTools(t).Tools(), 12)
	c := newTools(t, WithApplyPatch())
	tool, ok := c.LookupTool("apply_patch")
	require.True(t, ok)
	assert.Len(t, c.Tools(), 13)
	assert.True(t, tool.Annotations.Destructive)
	assert.True(t, tool.Paths.Declares("patch"))
}

func TestApplyPatchTool(t *testing.T) {
	root, c := newTestTools(t, WithApplyPatch())
	writeTestFiles(t, root, map[string]string{"src/a.go": "package a\n\nfunc A() int { return 1 }\n", "old.txt": "old\n", "win.txt": "x\r\ny\r\n"})
	res := execute(c, "apply_patch", map[string]any{"patch": "*** Begin Patch\n" +
		"*** Update File: src/a.go\n*** Move to: src/b.go\n@@\n-func A() int { return 1 }\n+func B() int { return 2 }\n" +
		"*** Add File: docs/new.md\n+# New\n" +
		"*** Delete File: old.txt\n" +
		"*** Update File: win.txt\n@@\n x\n-y\n+Y\n" +
		"*** End Patch"})
	require.False(t, res.IsError, res.Content)
	assert.Contains(t, res.Content, "Applied the patch: 4 files changed.\nR src/a.go -> src/b.go\nA docs/new.md\nD old.txt\nM win.txt\n")
	assert.Contains(t, res.Content, "\nsrc/b.go:\n 1 package a\n 2\n-3 func A() int { return 1 }\n+3 func B() int { return 2 }\n")
	assert.Equal(t, "package a\n\nfunc B() int { return 2 }\n", readTestFile(t, root, "src/b.go"))
	assert.Equal(t, "# New\n", readTestFile(t, root, "docs/new.md"))
	assert.Equal(t, "x\r\nY\r\n", readTestFile(t, root, "win.txt"))
	assert.NoFileExists(t, filepath.Join(root, "old.txt"))
	assert.NoFileExists(t, filepath.Join(root, "src/a.go"))

	p := payloadOf[PatchPayload](t, res, DisplayPatch)
	require.Len(t, p.Files, 4)
	assert.Equal(t, PatchFile{Operation: "move", Path: "src/b.go", MovedFrom: "src/a.go", Diff: p.Files[0].Diff, Added: 1, Removed: 1}, p.Files[0])
	assert.Contains(t, p.Files[0].Diff, "+func B() int { return 2 }")
	assert.Equal(t, []string{"add", "delete", "update"}, []string{p.Files[1].Operation, p.Files[2].Operation, p.Files[3].Operation})
	assert.Equal(t, 1, p.Files[2].Removed)
}

func TestApplyPatchRefusesWhole(t *testing.T) {
	root, c := newTestTools(t, WithApplyPatch())
	outside := t.TempDir()
	writeTestFiles(t, root, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "dir/x": "x\n"})
	require.NoError(t, symlink(outside, root, "out"))
	for _, tc := range []struct{ name, patch, want string }{
		{"a hunk fails", "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Update File: b.txt\n@@\n-nope\n+B\n*** End Patch",
			"the patch was not applied, no file changed: operation 2 (Update File b.txt), hunk 1 at patch line 7: context not found after line 0"},
		{"outside by link", "*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Add File: out/x\n+x\n*** End Patch", "outside the working directory"},
		{"outside by dot-dot", "*** Begin Patch\n*** Add File: ../x\n+x\n*** End Patch", "outside the working directory"},
		{"delete a folder", "*** Begin Patch\n*** Delete File: dir\n*** End Patch", "dir is a directory"},
		{"malformed", "*** Begin Patch\n*** Update File: a.txt\n-a\n?\n*** End Patch", "line 4"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := execute(c, "apply_patch", map[string]any{"patch": tc.patch})
			require.True(t, res.IsError)
			assert.Contains(t, res.Content, tc.want)
			assert.Equal(t, "a\n", readTestFile(t, root, "a.txt"))
			assert.Equal(t, "b\n", readTestFile(t, root, "b.txt"))
			entries, err := os.ReadDir(outside)
			require.NoError(t, err)
			assert.Empty(t, entries)
		})
	}
}

// TestApplyPatchPaths: the path fact lists every file a patch touches, as
// the tool opens it (links inside the root followed), a move both paths.
func TestApplyPatchPaths(t *testing.T) {
	root, c := newTestTools(t, WithApplyPatch())
	writeTestFiles(t, root, map[string]string{"real/f.txt": "f\n"})
	require.NoError(t, symlink("real", root, "alias"))
	tool, _ := c.LookupTool("apply_patch")
	paths, err := tool.Paths.List(context.Background(), "patch", "*** Begin Patch\n*** Update File: alias/f.txt\n*** Move to: "+root+"/b/../moved.txt\n@@\n-f\n+g\n"+
		"*** Delete File: ./gone.txt\n*** Add File: new/n.txt\n+n\n*** End Patch")
	require.NoError(t, err)
	assert.Equal(t, []string{"gone.txt", "moved.txt", "new/n.txt", "real/f.txt"}, paths)
	_, err = tool.Paths.List(context.Background(), "patch", "*** Begin Patch\n*** Delete File: ../x\n*** End Patch")
	assert.ErrorIs(t, err, ErrOutsideRoot)
}
