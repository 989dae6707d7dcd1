package patch

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParse(t *testing.T) {
	ops, err := Parse("\n*** Begin Patch\r\n" +
		"*** Add File: new/a.txt\n+one\n+\n+two\n" +
		"*** Delete File: old.txt\n" +
		"*** Update File: src/main.go\n*** Move to: src/app.go\n@@ func main() {\n-\tx := 1\n+\tx := 2\n \treturn\n" +
		"@@\n@@ class B\n-b\n+c\n*** End of File\n" +
		"*** End Patch\n")
	require.NoError(t, err)
	require.Len(t, ops, 3)
	assert.Equal(t, Op{Kind: Add, Path: "new/a.txt", Content: "one\n\ntwo\n", Line: 2}, ops[0])
	assert.Equal(t, Op{Kind: Delete, Path: "old.txt", Line: 6}, ops[1])
	up := ops[2]
	assert.Equal(t, Update, up.Kind)
	assert.Equal(t, "src/app.go", up.MoveTo)
	require.Len(t, up.Hunks, 2)
	assert.Equal(t, []string{"func main() {"}, up.Hunks[0].Anchors)
	assert.Equal(t, 9, up.Hunks[0].Line)
	assert.Equal(t, []Line{{'-', "\tx := 1"}, {'+', "\tx := 2"}, {' ', "\treturn"}}, up.Hunks[0].Lines)
	assert.Equal(t, 2, up.Hunks[1].Markers)
	assert.Equal(t, []string{"class B"}, up.Hunks[1].Anchors)
	assert.True(t, up.Hunks[1].EOF)
}

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, patch, want string }{
		{"no begin", "*** Update File: a\n@@\n-x\n*** End Patch", "must start with"},
		{"no end", "*** Begin Patch\n*** Delete File: a\n", "must end with"},
		{"empty", "*** Begin Patch\n*** End Patch", "no file operation"},
		{"bad header", "*** Begin Patch\n*** Frobnicate File: a\n*** End Patch", "line 2: expected"},
		{"no path", "*** Begin Patch\n*** Delete File:  \n*** End Patch", "names no path"},
		{"add without plus", "*** Begin Patch\n*** Add File: a\n+x\ny\n*** End Patch", "line 4: in Add File a every line starts with \"+\""},
		{"add empty", "*** Begin Patch\n*** Add File: a\n*** End Patch", "has no line"},
		{"delete with lines", "*** Begin Patch\n*** Delete File: a\n-x\n*** End Patch", "takes no lines"},
		{"update empty", "*** Begin Patch\n*** Update File: a\n*** End Patch", "has no hunk"},
		{"bad hunk line", "*** Begin Patch\n*** Update File: a\n@@\n x\n?y\n*** End Patch", "line 5: in Update File a, hunk 1"},
		{"second hunk without @@", "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** End of File\n-y\n*** End Patch", "must end the file's hunks"},
		{"stray marker", "*** Begin Patch\n*** Update File: a\n@@\n-x\n*** Move to: b\n*** End Patch", "unexpected \"*** Move to: b\""},
		{"empty hunk", "*** Begin Patch\n*** Update File: a\n@@\n@@@\n*** End Patch", "hunk 1 has no line"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.patch)
			require.Error(t, err)
			assert.ErrorIs(t, err, ErrSyntax)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

func TestApplyHunks(t *testing.T) {
	for _, tc := range []struct {
		name, content, diff, want, err string
	}{
		{name: "replace", content: "a\nb\nc\n", diff: "@@\n a\n-b\n+B\n c", want: "a\nB\nc\n"},
		{name: "no @@ first hunk", content: "a\nb\n", diff: " a\n-b\n+c", want: "a\nc\n"},
		{name: "insert at top", content: "a\n", diff: "@@\n+z\n a", want: "z\na\n"},
		{name: "append at end of file", content: "a\nb\n", diff: "@@\n b\n+c\n*** End of File", want: "a\nb\nc\n"},
		{name: "pure append at end", content: "a\n", diff: "@@\n+z\n*** End of File", want: "a\nz\n"},
		{name: "first match wins", content: "x\ny\nx\ny\n", diff: "@@\n x\n-y\n+Y", want: "x\nY\nx\ny\n"},
		{name: "anchor picks the second", content: "f1\nx\ny\nf2\nx\ny\n", diff: "@@ f2\n x\n-y\n+Y", want: "f1\nx\ny\nf2\nx\nY\n"},
		{name: "two anchors", content: "class A\n def m\n  r\nclass B\n def m\n  r\n", diff: "@@ class B\n@@  def m\n-  r\n+  s", want: "class A\n def m\n  r\nclass B\n def m\n  s\n"},
		{name: "trailing space fuzz", content: "a  \nb\n", diff: "@@\n a\n-b\n+c", want: "a  \nc\n"},
		{name: "indent fuzz", content: "\tif x {\n\t\ty()\n", diff: "@@\n if x {\n-    y()\n+    z()", want: "\tif x {\n    z()\n"},
		{name: "crlf kept", content: "a\r\nb\r\nc\r\n", diff: "@@\n a\n-b\n+B\n+B2", want: "a\r\nB\r\nB2\r\nc\r\n"},
		{name: "mixed endings stay", content: "a\r\nb\nc\n", diff: "@@\n a\n-b\n+B", want: "a\r\nB\nc\n"},
		{name: "bom kept", content: "\uFEFFpackage p\nvar x\n", diff: "@@\n-package p\n+package q", want: "\uFEFFpackage q\nvar x\n"},
		{name: "no final newline kept", content: "a\nb", diff: "@@\n a\n-b\n+c", want: "a\nc"},
		{name: "two hunks in order", content: "1\n2\n3\n4\n5\n6\n", diff: "@@\n 1\n-2\n+two\n@@\n 5\n-6\n+six", want: "1\ntwo\n3\n4\n5\nsix\n"},
		{name: "context missing", content: "a\nb\n", diff: "@@\n q\n-b\n+c", err: "f.txt, hunk 1 (patch line 1): context not found after line 0; the hunk's context and removed lines:\n  q\n  b"},
		{name: "anchor missing", content: "a\nb\n", diff: "@@ nowhere\n a\n-b\n+c", err: "hunk 1 (patch line 1): context not found: no line of the file is the anchor \"nowhere\""},
		{name: "second hunk missing", content: "a\nb\nc\n", diff: "@@\n-a\n+A\n@@\n-zz\n+c", err: "hunk 2"},
		{name: "hunks out of order", content: "a\nb\nc\n", diff: "@@\n-c\n+C\n@@\n-a\n+A", err: "hunk 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hunks, err := ParseDiff("f.txt", tc.diff)
			require.NoError(t, err)
			got, err := ApplyHunks(context.Background(), "f.txt", tc.content, hunks)
			if tc.err != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.err)
				var he *HunkError
				assert.True(t, errors.As(err, &he))
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tc.want, got)
		})
	}
}

func TestApplyPatchAcrossFiles(t *testing.T) {
	files, dir, outside := newRoot(t)
	writeTree(t, dir, map[string]string{
		"a.txt": "one\ntwo\n", "b.txt": "bee\n", "gone.txt": "bye\n", "dir/": "",
		"target.txt": "taken\n",
	})
	before := readTree(t, dir)
	apply := func(patch string) error {
		ops, err := Parse(patch)
		if err != nil {
			return err
		}
		_, err = Apply(context.Background(), files, ops)
		return err
	}

	for _, tc := range []struct{ name, patch, want string }{
		{"hunk fails in the third file", "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n*** Add File: c.txt\n+new\n*** Update File: b.txt\n@@\n-nothing\n+x\n*** End Patch",
			"operation 3 (Update File b.txt), hunk 1 at patch line 9"},
		{"add onto an existing file", "*** Begin Patch\n*** Delete File: gone.txt\n*** Add File: a.txt\n+x\n*** End Patch", "a.txt already exists"},
		{"move onto an existing file", "*** Begin Patch\n*** Update File: a.txt\n*** Move to: target.txt\n@@\n-one\n+1\n*** End Patch", "Move to target.txt: it already exists"},
		{"delete a folder", "*** Begin Patch\n*** Delete File: gone.txt\n*** Delete File: dir\n*** End Patch", "dir is a directory"},
		{"delete a missing file", "*** Begin Patch\n*** Delete File: nope.txt\n*** End Patch", "nope.txt does not exist"},
		{"update a missing file", "*** Begin Patch\n*** Update File: nope.txt\n@@\n+x\n*** End Patch", "nope.txt does not exist"},
		{"escape with dot-dot", "*** Begin Patch\n*** Add File: ../outside/x.txt\n+x\n*** End Patch", "outside the root"},
		{"escape by absolute path", "*** Begin Patch\n*** Update File: " + filepath.Join(outside, "secret.txt") + "\n@@\n-secret\n+x\n*** End Patch", "outside the root"},
		{"the root itself", "*** Begin Patch\n*** Delete File: .\n*** End Patch", "is the root"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := apply(tc.patch)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
			assert.Equal(t, before, readTree(t, dir), "nothing written")
			assert.Equal(t, map[string]string{"secret.txt": "secret\n"}, readTree(t, outside))
		})
	}

	t.Run("all applied", func(t *testing.T) {
		require.NoError(t, apply("*** Begin Patch\n"+
			"*** Update File: a.txt\n*** Move to: moved/a.txt\n@@\n one\n-two\n+2\n"+
			"*** Delete File: gone.txt\n"+
			"*** Delete File: target.txt\n*** Update File: b.txt\n*** Move to: target.txt\n@@\n-bee\n+B\n"+
			"*** Add File: deep/er/c.txt\n+c\n"+
			"*** Add File: gone.txt\n+back\n"+
			"*** Update File: deep/er/c.txt\n@@\n c\n+d\n"+
			"*** End Patch"))
		assert.Equal(t, map[string]string{
			"dir/": "", "moved/": "", "moved/a.txt": "one\n2\n", "target.txt": "B\n",
			"deep/": "", "deep/er/": "", "deep/er/c.txt": "c\nd\n", "gone.txt": "back\n",
		}, readTree(t, dir))
	})
}

// TestCommitRollsBack makes each step of a commit fail in turn: the tree
// is always as it was before, folders made removed.
func TestCommitRollsBack(t *testing.T) {
	files, dir, _ := newRoot(t)
	writeTree(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\n"})
	require.NoError(t, os.Chmod(filepath.Join(dir, "c.txt"), 0o600))
	before := readTree(t, dir)
	ops, err := Parse("*** Begin Patch\n*** Update File: a.txt\n@@\n-a\n+A\n*** Delete File: b.txt\n" +
		"*** Update File: c.txt\n*** Move to: x/y/c.txt\n@@\n-c\n+C\n*** Add File: n/new.txt\n+n\n*** End Patch")
	require.NoError(t, err)
	for failAt := 1; failAt <= 5; failAt++ {
		plan, err := Prepare(context.Background(), files, ops)
		require.NoError(t, err)
		require.Len(t, plan.final, 5)
		plan.failAt = failAt
		err = plan.Commit(context.Background())
		require.ErrorIs(t, err, ErrRolledBack, "step %d", failAt)
		assert.Equal(t, before, readTree(t, dir), "step %d", failAt)
		info, err := os.Stat(filepath.Join(dir, "c.txt"))
		require.NoError(t, err)
		assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a restored file keeps its mode")
	}
	plan, err := Prepare(context.Background(), files, ops)
	require.NoError(t, err)
	require.NoError(t, plan.Commit(context.Background()))
	info, err := os.Stat(filepath.Join(dir, "x/y/c.txt"))
	require.NoError(t, err)
	assert.Equal(t, os.FileMode(0o600), info.Mode().Perm(), "a moved file keeps its mode")
	assert.Equal(t, "A\n", readTree(t, dir)["a.txt"])
}

func TestApplyHunksStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	hunks, err := ParseDiff("f", "@@\n-a\n+b")
	require.NoError(t, err)
	_, err = ApplyHunks(ctx, "f", strings.Repeat("a\n", 10), hunks)
	assert.ErrorIs(t, err, context.Canceled)
}
