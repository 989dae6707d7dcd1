package codetools

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// canonicalTokens are the path steps FuzzCanonicalPathIsWhatToolsOpen
// spells paths with: the tree's names, links inside and out, ".", "..",
// empty steps and a name that does not exist.
var canonicalTokens = []string{"a", "b", "file", "secrets", "key", "docs", "keys", "abs", "out", "up", "l1", "loop1", "self", ".", "..", "", "new", "hl"}

// spellPath turns fuzz bytes into a path: the first byte says whether it
// is absolute (bit 0) and ends with a slash (bit 1); each next byte picks
// a step (low bits) and whether "//" precedes it (bit 7).
func spellPath(root string, spec []byte) string {
	if len(spec) == 0 {
		return ""
	}
	var sb strings.Builder
	if spec[0]&1 != 0 {
		sb.WriteString(root)
		sb.WriteByte('/')
	}
	for i, b := range spec[1:] {
		if i > 0 {
			sb.WriteByte('/')
			if b&0x80 != 0 {
				sb.WriteByte('/')
			}
		}
		sb.WriteString(canonicalTokens[int(b&0x7f)%len(canonicalTokens)])
	}
	if spec[0]&2 != 0 {
		sb.WriteByte('/')
	}
	return sb.String()
}

// FuzzCanonicalPathIsWhatToolsOpen is the differential test of the path
// fact (issue 23): for any spelling of a path (absolute, "..", "//", ".",
// a trailing slash, links inside the tree, links out, chains and loops of
// links), the canonical path the definitions declare ([llmtoolkit.Tool.Paths],
// what a permission check sees) is the file read_file reads and the file
// write_file writes, or both the declaration and the tool refuse. Every
// regular file holds its own canonical path, so what read_file returns
// names the file it opened.
func FuzzCanonicalPathIsWhatToolsOpen(f *testing.F) {
	for _, s := range [][]byte{
		{0, 0, 1, 2}, {1, 0, 1, 2}, {2, 3, 4}, {0, 5, 6, 4}, {1, 5, 6, 4}, {0, 7, 1, 2}, {0, 8, 4}, {0, 9, 4},
		{0, 10}, {0, 11}, {0, 12, 12, 0, 1, 2}, {0, 13, 0, 0x80 | 1, 2}, {0, 5, 14, 3, 4}, {0, 5, 6, 14, 0, 1, 2},
		{0, 14, 3, 4}, {0, 16}, {0, 5, 6, 16}, {0, 17}, {3, 5, 6}, {1}, {0, 15}, {0, 0, 2, 3},
	} {
		f.Add(s)
	}
	root, outside, c := outsideSetup(f)
	writeTestFile(f, outside, "key", "OUTSIDE\n")
	for _, d := range []string{"a/b", "secrets", "docs"} {
		require.NoError(f, os.MkdirAll(filepath.Join(root, d), 0o755))
	}
	files := []string{"a/b/file", "secrets/key"}
	for _, name := range files {
		writeTestFile(f, root, name, name)
	}
	for link, target := range map[string]string{
		"docs/keys": "../secrets",             // a folder link inside the tree
		"docs/abs":  filepath.Join(root, "a"), // an absolute link inside the tree
		"out":       outside,                  // a link out
		"up":        "..",                     // a link out, relative
		"l1":        "a/b/l2",                 // a chain: l1 -> a/b/l2 -> file
		"a/b/l2":    "file",
		"loop1":     "loop2", // a loop
		"loop2":     "loop1",
		"self":      ".",
	} {
		require.NoError(f, os.Symlink(target, filepath.Join(root, filepath.FromSlash(link))))
	}
	readDef, _ := c.LookupTool("read_file")
	writeDef, _ := c.LookupTool("write_file")
	ctx := context.Background()

	fsroot, err := os.OpenRoot(root) // reads as deep as the tools write
	require.NoError(f, err)
	f.Cleanup(func() { fsroot.Close() })

	f.Fuzz(func(t *testing.T, spec []byte) {
		if len(spec) > 40 {
			t.Skip("40 steps are enough to mix every spelling")
		}
		p := spellPath(root, spec)

		// read_file: what it read names the file it opened.
		want, werr := readDef.Paths.Canonical(ctx, "path", p)
		got, gerr := run(t, c, "read_file", map[string]any{"path": p})
		switch {
		case werr != nil && gerr == nil:
			t.Fatalf("read_file %q: the declaration refuses (%v), the tool read %q", p, werr, got)
		case werr == nil && gerr == nil && got != want:
			t.Fatalf("read_file %q: the declaration says %q, the tool read %q", p, want, got)
		case werr == nil && gerr != nil:
			// The tool may refuse what is no file: the canonical path must
			// name none.
			if info, err := fsroot.Stat(want); err == nil && info.Mode().IsRegular() {
				t.Fatalf("read_file %q: the declaration says file %q, the tool refused: %v", p, want, gerr)
			}
		}

		// write_file: the file that changed is the canonical one.
		want, werr = writeDef.Paths.Canonical(ctx, "path", p)
		const mark = "WRITTEN-BY-THE-FUZZ"
		_, gerr = run(t, c, "write_file", map[string]any{"path": p, "content": mark})
		if werr != nil && gerr == nil {
			t.Fatalf("write_file %q: the declaration refuses (%v), the tool wrote", p, werr)
		}
		if gerr == nil {
			data, err := fsroot.ReadFile(want)
			if err != nil || string(data) != mark {
				t.Fatalf("write_file %q: the declaration says %q, which holds %q (%v)", p, want, data, err)
			}
			// Put the tree back: every file holds its own path.
			if isFixture(files, filepath.ToSlash(want)) {
				writeTestFile(t, root, want, filepath.ToSlash(want))
			} else {
				require.NoError(t, fsroot.Remove(want))
			}
		}
		if data, err := os.ReadFile(filepath.Join(outside, "key")); err != nil || string(data) != "OUTSIDE\n" {
			t.Fatalf("write_file %q wrote outside the root", p)
		}
	})
}

func isFixture(files []string, name string) bool {
	for _, f := range files {
		if f == name {
			return true
		}
	}
	return false
}
