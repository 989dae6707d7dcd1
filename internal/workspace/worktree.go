package workspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// maxPatchBytes bounds a workspace's patch and each file merged.
const maxPatchBytes = 16 << 20

// Worktree is a git worktree made for one sub-agent.
type Worktree struct {
	// Repo is the parent's repository (its top-level folder).
	Repo string
	// Dir is the worktree's folder.
	Dir string
	// Branch is the worktree's new branch.
	Branch string
	// Sub is the parent's root relative to Repo (slash-separated, "" for
	// the top): the sub-agent's root is Dir/Sub, its changes are those
	// under it, its patch's paths are relative to it.
	Sub string
	// GitDir is the repository's common git folder (objects, refs,
	// hooks, config): a sandbox around the sub-agent must not show it.
	GitDir string
	// privateDir is the worktree's own git folder (GitDir/worktrees/NAME:
	// its HEAD and index).
	privateDir string
	base       string // the commit the branch starts at
}

// gitEnv is the environment of every git command: no terminal prompt, no
// system configuration, no repository named by the host's environment.
func gitEnv() []string {
	env := []string{"GIT_TERMINAL_PROMPT=0", "GIT_CONFIG_NOSYSTEM=1"}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k == "GIT_DIR" || k == "GIT_WORK_TREE" || k == "GIT_INDEX_FILE" || k == "GIT_COMMON_DIR" || k == "GIT_OBJECT_DIRECTORY" {
			continue
		}
		env = append(env, kv)
	}
	return env
}

// safeConfig is set on every git command: no hook runs (neither the
// parent's nor one a sub-agent wrote), no file-system monitor is started.
var safeConfig = []string{"-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false"}

// git runs git in dir with [safeConfig] and returns its standard output.
func git(ctx context.Context, dir string, stdin []byte, args ...string) ([]byte, error) {
	return runGit(ctx, append([]string{"-C", dir}, args...), stdin)
}

// inTree runs git on the worktree naming its git folders explicitly, so
// that what the sub-agent wrote in the worktree's .git file (a path to a
// repository of its own, with a config that runs commands) is never read.
func (w *Worktree) inTree(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	full := append([]string{"--git-dir=" + w.privateDir, "--work-tree=" + w.Dir, "-C", w.Dir}, args...)
	return runGit(ctx, full, stdin)
}

func runGit(ctx context.Context, args []string, stdin []byte) ([]byte, error) {
	cmd := exec.CommandContext(ctx, "git", append(append([]string{}, safeConfig...), args...)...)
	cmd.Env = gitEnv()
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

// Repository returns the top-level folder of the git repository holding
// root, or an error when root is in none or it has no commit.
func Repository(ctx context.Context, root string) (string, error) {
	out, err := git(ctx, root, nil, "rev-parse", "--show-toplevel", "--verify", "HEAD")
	if err != nil {
		return "", fmt.Errorf("workspace: %s is not in a git repository with a commit: %w", root, err)
	}
	top, _, _ := strings.Cut(string(out), "\n")
	return top, nil
}

// NewWorktree makes a worktree of the repository holding root, on a new
// branch named branch at its HEAD, in the folder dir (which must not
// exist). The parent's uncommitted changes are not in it. The sub-agent's
// root is [Worktree.Root]: the same place in the tree as root.
func NewWorktree(ctx context.Context, root, dir, branch string) (*Worktree, error) {
	// One git process for the three facts.
	out, err := git(ctx, root, nil, "rev-parse", "--show-toplevel", "--path-format=absolute", "--git-common-dir", "--verify", "HEAD")
	if err != nil {
		return nil, fmt.Errorf("workspace: %s is not in a git repository with a commit: %w", root, err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != 3 {
		return nil, fmt.Errorf("workspace: git rev-parse in %s answered %q", root, out)
	}
	w := &Worktree{Repo: lines[0], GitDir: lines[1], Dir: dir, Branch: branch, base: lines[2]}
	if rel, err := filepath.Rel(w.Repo, root); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
		w.Sub = filepath.ToSlash(rel)
	} else if real, rerr := filepath.EvalSymlinks(root); rerr == nil {
		if rel, err := filepath.Rel(w.Repo, real); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			w.Sub = filepath.ToSlash(rel)
		}
	}
	if _, err := git(ctx, w.Repo, nil, "worktree", "add", "--quiet", "-b", branch, dir, w.base); err != nil {
		return nil, fmt.Errorf("workspace: making the worktree: %w", err)
	}
	// The .git file git just wrote names the worktree's own git folder;
	// read now, before the sub-agent can change it.
	b, err := os.ReadFile(filepath.Join(dir, ".git"))
	p, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if err != nil || !ok {
		_ = w.Remove(ctx)
		return nil, fmt.Errorf("workspace: reading the worktree's .git file: %w", errors.Join(err, errors.New("no gitdir line")))
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	w.privateDir = p
	return w, nil
}

// Root is the sub-agent's root: the worktree's folder at the place of the
// parent's root in the tree.
func (w *Worktree) Root() string { return filepath.Join(w.Dir, filepath.FromSlash(w.Sub)) }

// stage stages every change of the worktree under Sub, new files
// included, in the worktree's own index.
//
// A nested repository without a commit makes git add fail ("'x/' does
// not have a commit checked out"): each one is left out and the add tried
// again, at most maxNested times.
func (w *Worktree) stage(ctx context.Context) error {
	spec := []string{"add", "--all", "--", w.pathspec()}
	for range maxNested {
		_, err := w.inTree(ctx, nil, spec...)
		if err == nil {
			return nil
		}
		msg := err.Error()
		i := strings.Index(msg, "error: '")
		j := strings.Index(msg, "' does not have a commit checked out")
		if i < 0 || j < i+8 {
			return fmt.Errorf("workspace: staging the changes of %s: %w", w.Dir, err)
		}
		spec = append(spec, ":(exclude,literal)"+msg[i+8:j])
	}
	return fmt.Errorf("workspace: staging the changes of %s: more than %d nested repositories without a commit", w.Dir, maxNested)
}

// maxNested bounds the nested repositories without a commit stage leaves
// out.
const maxNested = 16

func (w *Worktree) pathspec() string {
	if w.Sub == "" {
		return "."
	}
	return w.Sub
}

// relative is the --relative argument that makes paths relative to Sub.
func (w *Worktree) relative() []string {
	if w.Sub == "" {
		return nil
	}
	return []string{"--relative=" + w.Sub}
}

// Diff returns the worktree's changes under the parent's root against the
// commit it started at, committed or not, new files included, as one
// binary-safe patch whose paths are relative to the parent's root.
func (w *Worktree) Diff(ctx context.Context) (string, error) {
	if err := w.stage(ctx); err != nil {
		return "", err
	}
	args := append([]string{"diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames"}, w.relative()...)
	out, err := w.inTree(ctx, nil, append(args, w.base, "--", w.pathspec())...)
	if err != nil {
		return "", fmt.Errorf("workspace: the diff of %s: %w", w.Dir, err)
	}
	return string(out), nil
}

// changes lists the worktree's changed files with their contents at the
// base and now.
func (w *Worktree) changes(ctx context.Context) ([]change, error) {
	if err := w.stage(ctx); err != nil {
		return nil, err
	}
	args := append([]string{"diff", "--cached", "--raw", "-z", "--no-renames", "--no-ext-diff"}, w.relative()...)
	out, err := w.inTree(ctx, nil, append(args, w.base, "--", w.pathspec())...)
	if err != nil {
		return nil, fmt.Errorf("workspace: the changes of %s: %w", w.Dir, err)
	}
	// Each entry: ":OLDMODE NEWMODE OLDSHA NEWSHA STATUS\0PATH\0".
	fields := strings.Split(string(out), "\x00")
	var changes []change
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(strings.TrimPrefix(fields[i], ":"))
		if len(meta) < 5 {
			break
		}
		c := change{rel: fields[i+1]}
		oldMode, newMode := meta[0], meta[1]
		for _, m := range []string{oldMode, newMode} {
			switch m {
			case "120000":
				c.unsupported = "a symbolic link: not applied"
			case "160000":
				c.unsupported = "a submodule: not applied"
			}
		}
		if c.unsupported == "" {
			if oldMode != "000000" {
				if c.base, err = w.inTree(ctx, nil, "cat-file", "blob", meta[2]); err != nil {
					return nil, fmt.Errorf("workspace: reading %s at the base: %w", c.rel, err)
				}
				if c.base == nil {
					c.base = []byte{}
				}
			}
			if newMode != "000000" {
				if c.theirs, err = w.inTree(ctx, nil, "cat-file", "blob", meta[3]); err != nil {
					return nil, fmt.Errorf("workspace: reading %s in the worktree: %w", c.rel, err)
				}
				if c.theirs == nil {
					c.theirs = []byte{}
				}
				m, _ := strconv.ParseUint(newMode, 8, 32)
				c.perm = fs.FileMode(m).Perm()
			}
		}
		changes = append(changes, c)
	}
	return changes, nil
}

// Apply merges the worktree's changes into the parent's tree (the
// parent's root: the worktree's changes under Sub), file by file three
// ways (the file at the commit the worktree started at, the parent's
// file now, uncommitted changes included, and the worktree's), whole or
// not at all: when any file conflicts nothing is written and the error is
// a [*ConflictError] naming each file. check, when not nil, is asked
// about every file before any is written. The parent's index is not
// touched: the changes land in its working tree, uncommitted.
func (w *Worktree) Apply(ctx context.Context, root string, check CheckFunc) error {
	changes, err := w.changes(ctx)
	if err != nil {
		return err
	}
	return merge(ctx, root, changes, check)
}

// Remove removes the worktree and its branch.
func (w *Worktree) Remove(ctx context.Context) error {
	var errs []error
	if _, err := git(ctx, w.Repo, nil, "worktree", "remove", "--force", "--force", w.Dir); err != nil {
		if _, serr := os.Lstat(w.Dir); serr == nil {
			errs = append(errs, err)
			if rerr := os.RemoveAll(filepath.Clean(w.Dir)); rerr != nil {
				errs = append(errs, rerr)
			}
		}
		if _, perr := git(ctx, w.Repo, nil, "worktree", "prune"); perr != nil {
			errs = append(errs, perr)
		}
		if len(errs) == 1 { // removed by hand and pruned: done
			errs = nil
		}
	}
	if _, err := git(ctx, w.Repo, nil, "branch", "-D", "--quiet", w.Branch); err != nil && !strings.Contains(err.Error(), "not found") {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("workspace: removing %s: %w", w.Dir, err)
	}
	return nil
}
