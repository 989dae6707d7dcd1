#!/usr/bin/env bash
# tidy: fails unless "go mod tidy" would leave every module's go.mod and
# go.sum as they are. Run as a user's go command would, without go.work,
# with llmtoolkit's modules served at their versions.txt versions from the
# work tree (scripts/proxyenv.sh). Lines of llmtoolkit's own modules in a
# go.sum are not kept: their checksums change with every commit until the
# tag, and a dependency's go.sum is never read by its users.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
work=$(mktemp -d)
trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT
mods=$(bash scripts/modules.sh)
# LLMTOOLKIT_PROXYENV names a file proxyenv.sh wrote, to reuse its proxy and
# module cache (.ci/run shares one between its stages).
if [[ -n "${LLMTOOLKIT_PROXYENV:-}" ]]; then
  cp "$LLMTOOLKIT_PROXYENV" "$work/env"
else
  bash scripts/proxyenv.sh "$work" > "$work/env"
fi
eval "$(cat "$work/env")"
status=0
for mod in $mods; do
  diff=$(cd "$mod" && go mod tidy -diff 2>&1) && continue
  # What tidy would change, but llmtoolkit's own modules' checksums.
  rest=$(printf '%s\n' "$diff" | grep -E '^[-+]' | grep -vE '^(\+\+\+|---) ' |
    grep -vE '^[-+]github\.com/llmtoolkit/llmtoolkit(/[^ ]*)? v[^ ]+(/go\.mod)? h1:' || true)
  if [[ -n "$rest" ]]; then
    echo "go.mod of $mod is not tidy: run go mod tidy in $mod (GOWORK=off, see scripts/tidy.sh)"
    printf '%s\n' "$diff"
    status=1
  fi
done
exit $status
