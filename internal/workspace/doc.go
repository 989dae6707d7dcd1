// Package workspace is the engine of a sub-agent's own working folder: a
// git worktree on a new branch of the parent's repository, its changes as
// one patch, applied to the parent's tree whole or not at all, and its
// removal (worktree and branch: nothing left for `git worktree prune`);
// for a folder without git, a [Copy] (files cloned with FICLONE where the
// file system shares blocks, else copied; bounded; host-excluded paths
// left out) merged back file by file three ways, whole or not at all.
//
// Every git command it runs disables hooks (core.hooksPath=/dev/null), so
// neither the parent's nor the worktree's hooks run on the host's behalf.
//
// A [Registry] records each workspace made, so that the next start after
// a crash removes what was left ([Registry.Sweep]).
//
// Not done yet (issue 51): spawn_agent's use of it (isolation modes, the
// patch file, apply/keep/discard, confinement of the sub-agent's tools).
package workspace
