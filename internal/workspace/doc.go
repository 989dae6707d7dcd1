// Package workspace is the engine of a sub-agent's own working folder: a
// git worktree on a new branch of the parent's repository ([NewWorktree]),
// or, for a folder without git, a [Copy] (files cloned with FICLONE where
// the file system shares blocks, else copied; bounded; host-excluded paths
// and what .gitignore ignores left out, of the copy, its diff and its
// apply, as codetools' walkers leave them out); its changes as one binary-safe patch (Diff); and Apply, which
// merges them into the parent's tree file by file three ways (git
// merge-file: the base, the parent's file now, uncommitted changes
// included, and the workspace's), whole or not at all: a conflict in one
// file (a [*ConflictError] names each, with why) or a refusal of the
// host's check writes nothing, and a write that fails undoes the others.
// Files are written through an os.Root of the parent's root. Symbolic
// links and submodules are reported, never applied.
//
// Every git command it runs disables hooks (core.hooksPath=/dev/null) and
// the file-system monitor, and ignores GIT_DIR and the like from the
// host's environment; the commands on a worktree name its git folders
// themselves (--git-dir, --work-tree), so a sub-agent that rewrites the
// worktree's .git file to point at a repository of its own, whose config
// would run commands, gets nothing run. [Worktree.GitDir] is the
// repository's common folder, which a sandbox around the sub-agent must
// not show (its hooks and config run on the host's next git command).
//
// A [Registry] records each workspace made with the process that made it,
// so that the next start after a crash removes what a dead process left
// ([Registry.Sweep]), never the workspaces of a host still running, nor
// those of a durable run that may resume, which [Registry.Reopen] gives
// back to the resumed run.
//
// A nested repository inside a worktree comes back as a submodule
// (reported, never applied); one without a commit, which git add refuses,
// is left out (at most 16). Known limit: a Copy's merge base doubles its
// disk where the file system does not clone.
package workspace
