package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newFolder(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.MkdirAll(filepath.Join(root, "sub"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(mainGo), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "sub", "other.txt"), []byte("x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(root, "big.log"), []byte("skipped\n"), 0o644))
	return root
}

// TestTwoCopiesEditTheSameFunction: the worktree proof in copy mode, on a
// folder without git: both diffs, the first applies (three ways, beside
// an unrelated change the parent made meanwhile), the second reports its
// conflict and writes nothing; no copy is left.
func TestTwoCopiesEditTheSameFunction(t *testing.T) {
	ctx := context.Background()
	root := newFolder(t)
	skip := func(rel string) bool { return strings.HasSuffix(rel, ".log") }
	var copies []*Copy
	for i, word := range []string{"hola", "bonjour"} {
		c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"+string(rune('a'+i))), CopyOptions{Limits: Limits{MaxFiles: 100, MaxBytes: 1 << 20}, Skip: skip})
		require.NoError(t, err)
		assert.NoFileExists(t, filepath.Join(c.Dir, "big.log"), "host-excluded paths are not copied")
		copies = append(copies, c)
		edited := strings.Replace(mainGo, `"hello"`, `"`+word+`"`, 1)
		require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "main.go"), []byte(edited), 0o644))
		d, err := c.Diff(ctx)
		require.NoError(t, err)
		assert.Contains(t, d, `+	return "`+word+`"`)
		assert.Contains(t, d, "a/main.go")
	}
	// The parent changes another line meanwhile: the merge keeps both.
	parentEdit := strings.Replace(mainGo, "func main() { println(greet()) }", "func main() { print(greet()) }", 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(parentEdit), 0o644))

	require.NoError(t, copies[0].Apply(ctx, nil))
	want := strings.Replace(parentEdit, `"hello"`, `"hola"`, 1)
	err := copies[1].Apply(ctx, nil)
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "main.go")
	got, err := os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, want, string(got), "exactly the applied change, merged with the parent's")
	for _, c := range copies {
		require.NoError(t, c.Remove())
		assert.NoDirExists(t, filepath.Dir(c.Dir))
	}
}

// TestCopyBounded: a folder past the limits is refused and nothing of
// the copy is left.
func TestCopyBounded(t *testing.T) {
	root := newFolder(t)
	dir := filepath.Join(t.TempDir(), "ws")
	_, err := NewCopy(context.Background(), root, dir, CopyOptions{Limits: Limits{MaxFiles: 1}})
	require.ErrorIs(t, err, ErrTooBig)
	assert.NoDirExists(t, dir)
}

// TestKilledMidEditLeavesTheParentUntouched: a sub-agent's copy half
// edited and then discarded (removed) leaves the parent as it was.
func TestKilledMidEditLeavesTheParentUntouched(t *testing.T) {
	ctx := context.Background()
	root := newFolder(t)
	c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"), CopyOptions{})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "main.go"), []byte("package main\n// half"), 0o644))
	require.NoError(t, c.Remove())
	got, err := os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, mainGo, string(got))
	assert.NoDirExists(t, filepath.Dir(c.Dir))
}

// TestCopyHonoursGitignore: what the .gitignore files ignore (the root's,
// a nested one, a negation) and what Skip names are not copied, not in the
// diff, and neither written nor removed by Apply; the sub-agent's own
// .gitignore line is heard too. With CopyIgnored they are copied and
// reported.
func TestCopyHonoursGitignore(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name        string
		copyIgnored bool
	}{{"default", false}, {"CopyIgnored", true}} {
		t.Run(tc.name, func(t *testing.T) {
			root := newFolder(t)
			write := func(dir, rel, data string) {
				t.Helper()
				p := filepath.Join(dir, filepath.FromSlash(rel))
				require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
				require.NoError(t, os.WriteFile(p, []byte(data), 0o644))
			}
			write(root, ".gitignore", "node_modules/\n*.o\n")
			write(root, "node_modules/left/index.js", "parent's\n")
			write(root, "lib/a.o", "object\n")
			write(root, "web/.gitignore", "build/\n!keep.o\n")
			write(root, "web/build/app.js", "built\n")
			write(root, "web/keep.o", "kept\n")
			write(root, "secret/key", "k\n")
			skip := func(rel string) bool { return rel == "secret" }
			c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"), CopyOptions{Skip: skip, CopyIgnored: tc.copyIgnored})
			require.NoError(t, err)
			ignored := []string{"node_modules/left/index.js", "lib/a.o", "web/build/app.js"}
			for _, rel := range ignored {
				if tc.copyIgnored {
					assert.FileExists(t, filepath.Join(c.Dir, rel))
				} else {
					assert.NoFileExists(t, filepath.Join(c.Dir, rel), "ignored: not copied")
				}
			}
			assert.FileExists(t, filepath.Join(c.Dir, "web", "keep.o"), "negated: copied")
			assert.FileExists(t, filepath.Join(c.Dir, ".gitignore"))
			assert.NoFileExists(t, filepath.Join(c.Dir, "secret", "key"), "skipped: not copied")

			// The sub-agent edits, installs, builds, ignores a folder of its own.
			write(c.Dir, "main.go", mainGo+"// edited\n")
			write(c.Dir, "node_modules/dep/index.js", "installed\n")
			write(c.Dir, "lib/b.o", "object\n")
			write(c.Dir, "web/build/app.js", "rebuilt\n")
			write(c.Dir, "sub/.gitignore", "dist/\n")
			write(c.Dir, "sub/dist/out", "made\n")
			write(c.Dir, "secret/new", "n\n")
			if tc.copyIgnored {
				require.NoError(t, os.Remove(filepath.Join(c.Dir, "node_modules", "left", "index.js")))
			}
			d, err := c.Diff(ctx)
			require.NoError(t, err)
			files := diffFiles(d)
			want := []string{"main.go", "sub/.gitignore"}
			if tc.copyIgnored {
				want = []string{"lib/b.o", "main.go", "node_modules/dep/index.js", "node_modules/left/index.js", "sub/.gitignore", "sub/dist/out", "web/build/app.js"}
			}
			assert.Equal(t, want, files)
			assert.NotContains(t, d, "secret")

			require.NoError(t, c.Apply(ctx, nil))
			assert.FileExists(t, filepath.Join(root, "sub", ".gitignore"))
			assert.NoFileExists(t, filepath.Join(root, "secret", "new"), "skipped: never applied")
			if tc.copyIgnored {
				assert.NoFileExists(t, filepath.Join(root, "node_modules", "left", "index.js"))
				assert.FileExists(t, filepath.Join(root, "sub", "dist", "out"))
				return
			}
			for rel, want := range map[string]string{"node_modules/left/index.js": "parent's\n", "lib/a.o": "object\n", "web/build/app.js": "built\n"} {
				b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel)))
				require.NoError(t, err, "ignored: never removed by the apply")
				assert.Equal(t, want, string(b), "ignored: never written by the apply")
			}
			for _, rel := range []string{"node_modules/dep/index.js", "lib/b.o", "sub/dist/out"} {
				assert.NoFileExists(t, filepath.Join(root, filepath.FromSlash(rel)), "ignored: never brought back")
			}
			require.NoError(t, c.Remove())
		})
	}
}

// TestCopyDiffHeadersOnly: the diff's paths are rewritten in its headers
// only; a line that reads like one is left as it is.
func TestCopyDiffHeadersOnly(t *testing.T) {
	ctx := context.Background()
	root := newFolder(t)
	c, err := NewCopy(ctx, root, filepath.Join(t.TempDir(), "ws"), CopyOptions{})
	require.NoError(t, err)
	defer c.Remove()
	require.NoError(t, os.WriteFile(filepath.Join(c.Dir, "new.txt"), []byte("see a/base/x and b/work/y\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(c.Dir, "sub", "other.txt")))
	d, err := c.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, "+see a/base/x and b/work/y\n")
	assert.Contains(t, d, "diff --git a/new.txt b/new.txt\n")
	assert.Contains(t, d, "diff --git a/sub/other.txt b/sub/other.txt\n")
	assert.Contains(t, d, "+++ b/new.txt\n")
	assert.Contains(t, d, "--- a/sub/other.txt\n")
}

// diffFiles lists the files of a patch, in order.
func diffFiles(d string) []string {
	var out []string
	for _, line := range strings.Split(d, "\n") {
		if rest, ok := strings.CutPrefix(line, "diff --git a/"); ok {
			out = append(out, rest[:strings.Index(rest, " b/")])
		}
	}
	return out
}
