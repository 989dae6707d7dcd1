#!/usr/bin/env bash
# asuser: runs a command in a module as a user builds it: without go.work,
# with llmtoolkit's modules served at their versions.txt versions from the
# work tree (scripts/proxyenv.sh), and with the module's go.mod and go.sum
# copied aside (-modfile), so that the checksums of llmtoolkit's own
# modules, which change with every commit until the tag, never land in the
# tree (where the next commit's would no longer match them).
#
#   bash scripts/asuser.sh MOD CMD...   # MOD: a module's folder
#
# LLMTOOLKIT_PROXYENV names a file proxyenv.sh wrote, to reuse its proxy;
# else one is built for this command and removed after it.
set -euo pipefail
export PATH="$PATH:/usr/local/go/bin"
mod=$(cd "${1:?usage: asuser.sh MOD CMD...}" && pwd)
shift
cd "$(dirname "$0")/.."
scratch=$(mktemp -d)
trap 'chmod -R u+w "$scratch" 2>/dev/null; rm -rf "$scratch"' EXIT
envfile=${LLMTOOLKIT_PROXYENV:-}
if [[ -z "$envfile" ]]; then
  envfile=$scratch/env
  bash scripts/proxyenv.sh "$scratch/proxy" >"$envfile"
fi
eval "$(cat "$envfile")"
cp "$mod/go.mod" "$scratch/go.mod"
touch "$scratch/go.sum"
[[ -f "$mod/go.sum" ]] && { grep -vE '^github\.com/llmtoolkit/llmtoolkit(/[^ ]*)? ' "$mod/go.sum" >"$scratch/go.sum" || true; }
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-modfile=$scratch/go.mod"
cd "$mod"
"$@"
