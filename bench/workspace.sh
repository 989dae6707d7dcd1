#!/usr/bin/env bash
# bench/workspace.sh: what a sub-agent's workspace would cost on the Go
# source tree: `git worktree add` + `git worktree remove` in a repository
# holding the tree, `cp -r TREE` + `rm -rf`, and `cp -r --reflink=always` where
# the file system clones (FICLONE), with the disk each copy uses. These
# are the baselines; internal/workspace's NewWorktree and NewCopy (the copy
# and its base) are timed beside them in the same run
# (TestMeasureWorkspaces), where each round times the four cases in turn
# (git worktree add, NewWorktree, cp -r, NewCopy) so that all see the same
# load: compare those rows with each other, not with the first table,
# which ran earlier under another load.
#
#   bash bench/workspace.sh [TREE]   TREE defaults to $(go env GOROOT)/src
#   ROUNDS=5 bash bench/workspace.sh rounds per case (default 3), medians
#
# The repository is made once (git init, one commit of the tree: not
# timed) in a temporary folder on the same file system as TMPDIR; every
# case creates then removes one workspace per round, cases in turns.
set -euo pipefail

tree=${1:-$(go env GOROOT)/src}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'git -C "$work/repo" worktree prune 2>/dev/null || true; rm -rf "$work"' EXIT

cp -r "$tree" "$work/repo"
git -C "$work/repo" init -q
git -C "$work/repo" config gc.auto 0 # no background gc racing the cleanup
git -C "$work/repo" config maintenance.auto false
git -C "$work/repo" -c core.hooksPath=/dev/null add -A
git -C "$work/repo" -c user.name=bench -c user.email=bench@localhost -c core.hooksPath=/dev/null commit -qm tree
files=$(git -C "$work/repo" ls-files | wc -l)

now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }

reflink=yes
if ! cp -r --reflink=always "$work/repo/go.mod" "$work/probe" 2>/dev/null; then reflink=no; fi
rm -f "$work/probe"

declare -A create remove disk
for ((r = 1; r <= rounds; r++)); do
	t0=$(now); git -C "$work/repo" -c core.hooksPath=/dev/null worktree add -q -b "bench-$r" "$work/wt" HEAD; t1=$(now)
	disk[worktree]+="$(du -sk "$work/wt" | cut -f1) "
	git -C "$work/repo" worktree remove --force "$work/wt"; git -C "$work/repo" branch -qD "bench-$r"; t2=$(now)
	create[worktree]+="$(echo "$t1 - $t0" | bc) "; remove[worktree]+="$(echo "$t2 - $t1" | bc) "

	t0=$(now); cp -r "$tree" "$work/copy"; t1=$(now)
	disk[cp]+="$(du -sk "$work/copy" | cut -f1) "
	rm -rf "$work/copy"; t2=$(now)
	create[cp]+="$(echo "$t1 - $t0" | bc) "; remove[cp]+="$(echo "$t2 - $t1" | bc) "

	if [[ $reflink == yes ]]; then
		before=$(df -k --output=used "$work" | tail -1)
		t0=$(now); cp -r --reflink=always "$tree" "$work/clone"; t1=$(now)
		after=$(df -k --output=used "$work" | tail -1)
		disk[reflink]+="$((after - before)) "
		rm -rf "$work/clone"; t2=$(now)
		create[reflink]+="$(echo "$t1 - $t0" | bc) "; remove[reflink]+="$(echo "$t2 - $t1" | bc) "
	fi
done

echo "tree: $tree ($files files), $rounds rounds, medians; reflinks: $reflink; load: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-10s %10s %10s %14s\n' case create_s remove_s disk_KiB
for c in worktree cp reflink; do
	[[ -n ${create[$c]:-} ]] || continue
	printf '%-10s %10s %10s %14s\n' "$c" "$(tr ' ' '\n' <<<"${create[$c]}" | grep . | median)" \
		"$(tr ' ' '\n' <<<"${remove[$c]}" | grep . | median)" "$(tr ' ' '\n' <<<"${disk[$c]}" | grep . | median)"
done
w=$(tr ' ' '\n' <<<"${create[worktree]}" | grep . | median); c=$(tr ' ' '\n' <<<"${create[cp]}" | grep . | median)
echo "create, worktree / cp -r: $(echo "scale=2; $w / $c" | bc)"
echo "interleaved, each round every case in turn, the order reversed every other round (TestMeasureWorkspaces); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-12s %10s %10s %10s\n' case create_s remove_s create_cpu_s
(cd "$(dirname "$0")/.." && LLMTOOLKIT_WORKSPACE_REPO="$work/repo" ROUNDS=$rounds \
	go test ./internal/workspace -run TestMeasureWorkspaces -count=1 -timeout 60m -v | grep -E "^(git-worktree|NewWorktree|cp-r|NewCopy|round)|FAIL|Error|panic")
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
