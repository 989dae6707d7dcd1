package workspace

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mainGo = "package main\n\nfunc greet() string {\n\treturn \"hello\"\n}\n\nfunc main() { println(greet()) }\n"

func run(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	return string(out)
}

func newRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	repo := filepath.Join(t.TempDir(), "repo")
	require.NoError(t, os.MkdirAll(repo, 0o755))
	run(t, repo, "init", "--quiet", "-b", "main")
	require.NoError(t, os.WriteFile(filepath.Join(repo, "main.go"), []byte(mainGo), 0o644))
	run(t, repo, "add", "main.go")
	run(t, repo, "commit", "--quiet", "-m", "first")
	return repo
}

// TestTwoWorktreesEditTheSameFunction: two sub-agents' worktrees, edited
// in parallel, change greet differently; both diffs come back, the first
// applies, the second reports its conflict by file and changes nothing;
// the parent's tree holds exactly the applied change; no worktree or
// branch is left.
func TestTwoWorktreesEditTheSameFunction(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	// A hook that would run on the host's behalf: never run.
	hook := filepath.Join(repo, ".git", "hooks", "post-checkout")
	marker := filepath.Join(t.TempDir(), "hook-ran")
	require.NoError(t, os.WriteFile(hook, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755))

	edits := map[string]string{"a": "hola", "b": "bonjour"}
	trees := map[string]*Worktree{}
	diffs := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for name, word := range edits {
		w, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "wt-"+name), "sub-"+name)
		require.NoError(t, err)
		trees[name] = w
		wg.Add(1)
		go func() {
			defer wg.Done()
			edited := strings.Replace(mainGo, `"hello"`, `"`+word+`"`, 1)
			if err := os.WriteFile(filepath.Join(w.Dir, "main.go"), []byte(edited), 0o644); err != nil {
				t.Error(err)
				return
			}
			d, err := w.Diff(ctx)
			if err != nil {
				t.Error(err)
				return
			}
			mu.Lock()
			diffs[name] = d
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Contains(t, diffs["a"], `+	return "hola"`)
	require.Contains(t, diffs["b"], `+	return "bonjour"`)
	assert.NoFileExists(t, marker, "no hook ran")

	require.NoError(t, trees["a"].Apply(ctx, repo, nil))
	err := trees["b"].Apply(ctx, repo, nil)
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "main.go")

	got, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(mainGo, `"hello"`, `"hola"`, 1), string(got), "exactly the applied change")

	for _, w := range trees {
		require.NoError(t, w.Remove(ctx))
		assert.NoDirExists(t, w.Dir)
	}
	list := run(t, repo, "worktree", "list", "--porcelain")
	assert.Equal(t, 1, strings.Count(list, "worktree "), list)
	assert.NotContains(t, run(t, repo, "branch", "--list"), "sub-")
}

// TestApplyIsAllOrNothing: a patch of two files whose second conflicts
// changes neither.
func TestApplyIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	require.NoError(t, os.WriteFile(filepath.Join(repo, "b.txt"), []byte("one\n"), 0o644))
	run(t, repo, "add", "b.txt")
	run(t, repo, "commit", "--quiet", "-m", "b")
	w, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "wt"), "sub")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Remove(ctx)) }()
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "main.go"), []byte(mainGo+"// more\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "b.txt"), []byte("two\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "new.txt"), []byte("new\n"), 0o644))
	d, err := w.Diff(ctx)
	require.NoError(t, err)

	require.NoError(t, os.WriteFile(filepath.Join(repo, "b.txt"), []byte("changed by the parent\n"), 0o644))
	err = w.Apply(ctx, repo, nil)
	require.ErrorIs(t, err, ErrConflict)
	var ce *ConflictError
	require.ErrorAs(t, err, &ce)
	assert.Equal(t, []string{"b.txt"}, ce.Files, "only the file that conflicts is named")
	assert.Contains(t, d, "new.txt")
	got, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, mainGo, string(got), "the file that would apply was not touched")
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
}

// TestWorktreeIgnoresARewrittenGitFile: a sub-agent that rewrites the
// worktree's .git file to name a repository of its own, whose config
// would run a command (core.fsmonitor, a filter) on the host's next git
// command, runs nothing: the host's git names the worktree's folders
// itself. The diff and the apply still see the change.
func TestWorktreeIgnoresARewrittenGitFile(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	w, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "wt"), "sub")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Remove(ctx)) }()
	marker := filepath.Join(t.TempDir(), "ran")
	run(t, w.Dir, "init", "--quiet", filepath.Join(w.Dir, "evil"))
	evil := filepath.Join(w.Dir, "evil", ".git")
	cfg := "[core]\n\tfsmonitor = \"touch " + marker + "; false\"\n\thooksPath = " + evil + "/hooks\n[filter \"x\"]\n\tclean = touch " + marker + "\n"
	f, err := os.OpenFile(filepath.Join(evil, "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(cfg)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, ".git"), []byte("gitdir: "+evil+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, ".gitattributes"), []byte("* filter=x\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, ".gitignore"), []byte("evil/\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "main.go"), []byte(strings.Replace(mainGo, "hello", "hi", 1)), 0o644))

	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, `+	return "hi"`)
	require.NoError(t, w.Apply(ctx, repo, nil))
	got, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Contains(t, string(got), `"hi"`)
	assert.NoFileExists(t, marker, "nothing of the sub-agent's config ran")
}

// TestWorktreeMergesThreeWays: the parent's root is a subfolder of the
// repository and holds uncommitted changes; the worktree's edits of the
// same file elsewhere merge with them, its edits outside the root are not
// the parent's, and the patch's paths are relative to the root. A check
// that refuses one file writes nothing.
func TestWorktreeMergesThreeWays(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	require.NoError(t, os.MkdirAll(filepath.Join(repo, "app"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(repo, "app", "main.go"), []byte(mainGo), 0o644))
	run(t, repo, "add", "app")
	run(t, repo, "commit", "--quiet", "-m", "app")
	root := filepath.Join(repo, "app")
	w, err := NewWorktree(ctx, root, filepath.Join(t.TempDir(), "wt"), "sub")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Remove(ctx)) }()
	assert.Equal(t, "app", w.Sub)
	assert.Equal(t, filepath.Join(w.Dir, "app"), w.Root())

	require.NoError(t, os.WriteFile(filepath.Join(w.Root(), "main.go"), []byte(strings.Replace(mainGo, "hello", "hi", 1)), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Root(), "new.txt"), []byte("new\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "main.go"), []byte("outside the root\n"), 0o644))
	parentEdit := strings.Replace(mainGo, "println(greet())", "print(greet())", 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "main.go"), []byte(parentEdit), 0o644))

	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, "a/main.go")
	assert.Contains(t, d, "b/new.txt")
	assert.NotContains(t, d, "outside the root")

	refuse := func(_ context.Context, rel string) error {
		if rel == "new.txt" {
			return assert.AnError
		}
		return nil
	}
	require.ErrorIs(t, w.Apply(ctx, root, refuse), assert.AnError)
	got, err := os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, parentEdit, string(got), "refused: nothing written")
	assert.NoFileExists(t, filepath.Join(root, "new.txt"))

	require.NoError(t, w.Apply(ctx, root, nil))
	got, err = os.ReadFile(filepath.Join(root, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, strings.Replace(parentEdit, "hello", "hi", 1), string(got), "both changes")
	assert.FileExists(t, filepath.Join(root, "new.txt"))
	top, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, mainGo, string(top), "the worktree's change outside the root is not applied")
	assert.Contains(t, run(t, repo, "status", "--porcelain"), "?? app/new.txt", "the parent's index is not touched")
}

// TestWorktreeNestedEmptyRepository: a nested repository without a commit
// (git add refuses it) is left out of the diff; the sub-agent's other
// changes still come back and apply.
func TestWorktreeNestedEmptyRepository(t *testing.T) {
	ctx := context.Background()
	repo := newRepo(t)
	w, err := NewWorktree(ctx, repo, filepath.Join(t.TempDir(), "wt"), "sub")
	require.NoError(t, err)
	defer func() { require.NoError(t, w.Remove(ctx)) }()
	for _, n := range []string{"empty-a", "empty b"} {
		run(t, w.Dir, "init", "--quiet", filepath.Join(w.Dir, n))
		require.NoError(t, os.WriteFile(filepath.Join(w.Dir, n, "f.txt"), []byte("x\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(w.Dir, "main.go"), []byte(strings.Replace(mainGo, "hello", "hi", 1)), 0o644))
	d, err := w.Diff(ctx)
	require.NoError(t, err)
	assert.Contains(t, d, `+	return "hi"`)
	assert.NotContains(t, d, "empty")
	require.NoError(t, w.Apply(ctx, repo, nil))
	assert.Contains(t, string(must(os.ReadFile(filepath.Join(repo, "main.go")))), `"hi"`)
	assert.NoDirExists(t, filepath.Join(repo, "empty-a"))
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
