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

	require.NoError(t, Apply(ctx, repo, diffs["a"]))
	err := Apply(ctx, repo, diffs["b"])
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
	err = Apply(ctx, repo, d)
	require.ErrorIs(t, err, ErrConflict)
	assert.Contains(t, err.Error(), "b.txt")
	got, err := os.ReadFile(filepath.Join(repo, "main.go"))
	require.NoError(t, err)
	assert.Equal(t, mainGo, string(got), "the file that would apply was not touched")
	assert.NoFileExists(t, filepath.Join(repo, "new.txt"))
}
