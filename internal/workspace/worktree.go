package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// ErrConflict is wrapped by the error of [Apply] when the patch does not
// apply to the parent's tree as it is now: nothing was changed.
var ErrConflict = errors.New("workspace: the changes conflict with the parent's tree")

// maxPatchBytes bounds a workspace's patch.
const maxPatchBytes = 16 << 20

// Worktree is a git worktree made for one sub-agent.
type Worktree struct {
	// Repo is the parent's repository (its top-level folder).
	Repo string
	// Dir is the worktree's folder.
	Dir string
	// Branch is the worktree's new branch.
	Branch string
	base   string // the commit the branch starts at
}

// git runs git with hooks disabled in dir and returns its standard output.
func git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"-c", "core.hooksPath=/dev/null", "-C", dir}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Env = append(os.Environ(), "GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1")
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return out.Bytes(), fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(errb.String()))
	}
	if out.Len() > maxPatchBytes {
		return nil, fmt.Errorf("git %s: more than %d bytes of output", strings.Join(args, " "), maxPatchBytes)
	}
	return out.Bytes(), nil
}

// NewWorktree makes a worktree of the repository holding root, on a new
// branch named branch at its HEAD, in the folder dir (which must not
// exist). The parent's uncommitted changes are not in it.
func NewWorktree(ctx context.Context, root, dir, branch string) (*Worktree, error) {
	top, err := git(ctx, root, nil, "rev-parse", "--show-toplevel")
	if err != nil {
		return nil, fmt.Errorf("workspace: %s is not in a git repository: %w", root, err)
	}
	head, err := git(ctx, root, nil, "rev-parse", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("workspace: the repository of %s has no commit: %w", root, err)
	}
	w := &Worktree{Repo: strings.TrimSpace(string(top)), Dir: dir, Branch: branch, base: strings.TrimSpace(string(head))}
	if _, err := git(ctx, w.Repo, nil, "worktree", "add", "--quiet", "-b", branch, dir, w.base); err != nil {
		return nil, fmt.Errorf("workspace: making the worktree: %w", err)
	}
	return w, nil
}

// Diff returns the worktree's changes against the commit it started at,
// committed or not, new files included, as one binary-safe patch.
func (w *Worktree) Diff(ctx context.Context) (string, error) {
	if _, err := git(ctx, w.Dir, nil, "add", "--all"); err != nil {
		return "", fmt.Errorf("workspace: staging the changes of %s: %w", w.Dir, err)
	}
	out, err := git(ctx, w.Dir, nil, "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", w.base)
	if err != nil {
		return "", fmt.Errorf("workspace: the diff of %s: %w", w.Dir, err)
	}
	return string(out), nil
}

// Apply applies patch to the parent's tree at root, whole or not at all:
// when any file does not apply, nothing is changed and the error wraps
// [ErrConflict], naming each file that conflicts.
func Apply(ctx context.Context, root, patch string) error {
	if patch == "" {
		return nil
	}
	if _, err := git(ctx, root, []byte(patch), "apply", "--check", "--whitespace=nowarn"); err != nil {
		files := conflictingFiles(err.Error())
		return fmt.Errorf("%w: %s", ErrConflict, strings.Join(files, ", "))
	}
	if _, err := git(ctx, root, []byte(patch), "apply", "--whitespace=nowarn"); err != nil {
		return fmt.Errorf("workspace: applying the changes: %w", err)
	}
	return nil
}

// conflictingFiles reads the files git apply --check refused from its
// message ("error: patch failed: FILE:LINE", "error: FILE: patch does not
// apply").
func conflictingFiles(msg string) []string {
	var files []string
	seen := map[string]bool{}
	for _, line := range strings.Split(msg, "\n") {
		line = strings.TrimSpace(line)
		var f string
		if rest, ok := strings.CutPrefix(line, "error: patch failed: "); ok {
			if i := strings.LastIndexByte(rest, ':'); i > 0 {
				f = rest[:i]
			}
		} else if rest, ok := strings.CutPrefix(line, "error: "); ok {
			if i := strings.Index(rest, ": "); i > 0 {
				f = rest[:i]
			}
		}
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, f)
		}
	}
	if len(files) == 0 {
		files = []string{strings.TrimSpace(msg)}
	}
	return files
}

// Remove removes the worktree and its branch.
func (w *Worktree) Remove(ctx context.Context) error {
	var errs []error
	if _, err := git(ctx, w.Repo, nil, "worktree", "remove", "--force", w.Dir); err != nil {
		errs = append(errs, err)
		if rerr := os.RemoveAll(filepath.Clean(w.Dir)); rerr != nil {
			errs = append(errs, rerr)
		}
		if _, perr := git(ctx, w.Repo, nil, "worktree", "prune"); perr != nil {
			errs = append(errs, perr)
		}
	}
	if _, err := git(ctx, w.Repo, nil, "branch", "-D", "--quiet", w.Branch); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("workspace: removing %s: %w", w.Dir, err)
	}
	return nil
}
