#!/usr/bin/env bash
# apicheck: compares the exported API of every module of versions.txt with
# its last release (RELEASED) using apidiff (pinned in tools/go.mod), and
# fails on an incompatible change unless VERSION is a new major, or a new
# minor before v1, above RELEASED; then it lists the changes.
#
# The release's tree: its tag (FOLDER/RELEASED, the core's RELEASED) when
# the clone has it, else LLMTOOLKIT_API_BASE (a git revision), else the
# first commit whose versions.txt names RELEASED (tags need not travel).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
repo=$PWD
work=$(mktemp -d)
trap 'chmod -R u+w "$work" 2>/dev/null; rm -rf "$work"' EXIT
go build -C tools -o "$work/apidiff" golang.org/x/exp/cmd/apidiff

# bumped OLD NEW: a new major, or a new minor before v1.
bumped() {
  local o n
  IFS=. read -r -a o <<<"${1#v}"; IFS=. read -r -a n <<<"${2#v}"
  [[ ${n[0]} -gt ${o[0]} ]] || { [[ ${o[0]} -eq 0 && ${n[0]} -eq 0 && ${n[1]} -gt ${o[1]} ]]; }
}

status=0
while read -r folder version released _; do
  [[ -z "$folder" || "$folder" == \#* ]] && continue
  path=$(awk '$1 == "module" { print $2; exit }' "$folder/go.mod")
  major=""
  bumped "$released" "$version" && major=1
  tag=$released; [[ "$folder" != . ]] && tag=$folder/$released
  base=$(git rev-parse -q --verify "refs/tags/$tag^{commit}" 2>/dev/null ||
    { [[ -n "${LLMTOOLKIT_API_BASE:-}" ]] && git rev-parse "$LLMTOOLKIT_API_BASE^{commit}"; } ||
    git log --reverse --format=%H -S"$released" -- versions.txt | sed -n 1p)
  if [[ -z "$base" ]]; then
    echo "FAIL  $path: no tree for $released (no tag $tag, no commit naming it)"; status=1; continue
  fi
  if [[ ! -d "$work/base-$base" ]]; then
    mkdir -p "$work/base-$base" && git archive "$base" | tar -x -C "$work/base-$base"
    # A repository of its own, for scripts/proxyenv.sh (git ls-files).
    (cd "$work/base-$base" && git init -q && git add -A &&
      git -c user.name=apicheck -c user.email=apicheck@localhost commit -qm "$base")
  fi
  # A module left out of go.work is loaded as a user builds it
  # (scripts/asuser.sh): the release's tree with llmtoolkit's modules at
  # the release's versions, served from that tree, and this tree with
  # this tree's.
  run=() run_base=()
  if ! bash scripts/inworkspace.sh "$folder"; then
    [[ -f "$work/proxy/env" ]] || { mkdir -p "$work/proxy" && bash scripts/proxyenv.sh "$work/proxy" >"$work/proxy/env.new" && mv "$work/proxy/env.new" "$work/proxy/env"; }
    [[ -f "$work/proxy-$base/env" ]] || { mkdir -p "$work/proxy-$base" &&
      LLMTOOLKIT_TREE="$work/base-$base" bash scripts/proxyenv.sh "$work/proxy-$base" >"$work/proxy-$base/env.new" &&
      mv "$work/proxy-$base/env.new" "$work/proxy-$base/env"; }
    run=(env LLMTOOLKIT_PROXYENV="$work/proxy/env" bash "$repo/scripts/asuser.sh" .)
    run_base=(env LLMTOOLKIT_PROXYENV="$work/proxy-$base/env" bash "$repo/scripts/asuser.sh" .)
  fi
  api="$work/$(echo "$folder" | tr / _).api"
  if ! (cd "$work/base-$base/$folder" && "${run_base[@]}" "$work/apidiff" -m -w "$api" "$path") >"$api.log" 2>&1 ||
     ! (cd "$repo/$folder" && "${run[@]}" "$work/apidiff" -m -incompatible "$api" "$path") >"$api.diff" 2>>"$api.log"; then
    echo "FAIL  $path: apidiff failed"; cat "$api.log" "$api.diff" 2>/dev/null | grep -v '^Ignoring internal' | sed 's/^/      /' | tail -10; status=1; continue
  fi
  if grep -q . "$api.diff" && [[ -n "$major" ]]; then
    # A new major (minor before v1) may change the API: what changed is
    # said, for CHANGELOG.md to record.
    echo "ok    $path: $version after $released changes its API ($(grep -c . "$api.diff") incompatible changes since $(git rev-parse --short "$base")):"
    sed 's/^/      /' "$api.diff"
  elif grep -q . "$api.diff"; then
    echo "FAIL  $path: incompatible with $released ($base); name a new major (a new minor before v1) in versions.txt"
    sed 's/^/      /' "$api.diff"; status=1
  else
    echo "ok    $path: compatible with $released ($(git rev-parse --short "$base"))"
  fi
done < versions.txt
exit $status
