package patch

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzPatchAllOrNothing applies arbitrary patches to a small tree that
// holds a link out of the root, failing the commit at an arbitrary step:
// a patch refused, or a commit failed, leaves the tree as it was; nothing
// outside the root ever changes; a patch applied changes only the files
// it names.
func FuzzPatchAllOrNothing(f *testing.F) {
	for _, s := range []string{
		"*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+2\n*** Add File: n/x.txt\n+x\n*** Delete File: b.txt\n*** End Patch",
		"*** Begin Patch\n*** Update File: a.txt\n*** Move to: sub/a.txt\n@@\n-one\n+1\n*** End Patch",
		"*** Begin Patch\n*** Update File: out/secret.txt\n@@\n-secret\n+x\n*** End Patch",
		"*** Begin Patch\n*** Add File: out/new.txt\n+x\n*** End Patch",
		"*** Begin Patch\n*** Update File: a.txt\n*** Move to: out/a.txt\n@@\n-one\n+1\n*** End Patch",
		"*** Begin Patch\n*** Delete File: sub\n*** End Patch",
		"*** Begin Patch\n*** Update File: crlf.txt\n@@\n x\n-y\n+Y\n*** End of File\n*** End Patch",
		"*** Begin Patch\n*** Delete File: b.txt\n*** Update File: a.txt\n*** Move to: b.txt\n@@\n+0\n one\n*** End Patch",
	} {
		for _, failAt := range []uint8{0, 1, 2, 3} {
			f.Add(s, failAt)
		}
	}
	tree := map[string]string{"a.txt": "one\ntwo\nthree\n", "b.txt": "bee\n", "crlf.txt": "x\r\ny\r\n", "sub/": ""}
	f.Fuzz(func(t *testing.T, text string, failAt uint8) {
		files, dir, outside := newRoot(t)
		writeTree(t, dir, tree)
		require.NoError(t, os.Symlink(outside, filepath.Join(dir, "out")))
		before := readTree(t, dir)
		outsideBefore := readTree(t, outside)
		defer func() { assert.Equal(t, outsideBefore, readTree(t, outside), "outside the root") }()

		ops, err := Parse(text)
		if err != nil {
			return
		}
		plan, err := Prepare(context.Background(), files, ops)
		if err != nil {
			assert.Equal(t, before, readTree(t, dir), "a refused patch wrote: %v", err)
			return
		}
		plan.failAt = int(failAt % 8)
		if err := plan.Commit(context.Background()); err != nil {
			assert.ErrorIs(t, err, ErrRolledBack)
			assert.Equal(t, before, readTree(t, dir), "a failed commit left changes: %v", err)
			return
		}
		touched := map[string]bool{}
		for _, c := range plan.Changes {
			touched[filepath.ToSlash(c.Path)] = true
			touched[filepath.ToSlash(c.MoveTo)] = true
		}
		after := readTree(t, dir)
		for p, c := range before {
			if !touched[p] && p[len(p)-1] != '/' {
				assert.Equal(t, c, after[p], "%s changed but the patch does not name it", p)
			}
		}
	})
}
