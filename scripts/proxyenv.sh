#!/usr/bin/env bash
# proxyenv: serves this repository's modules, at the versions versions.txt
# names, from a Go module proxy on disk built from the work tree
# (tools/modproxy), and prints the environment that makes the go command
# take llmtoolkit's modules from it and every other module as usual:
#
#   eval "$(bash scripts/proxyenv.sh DIR)"   # DIR: a scratch folder, removed by the caller
#   LLMTOOLKIT_TREE=/other/clone ...          # serve another tree (with this versions.txt
#                                             # when it has none)
#
# GOPROXY is DIR/proxy, then the module cache this machine already has
# (a proxy on disk too), then "go env GOPROXY"; GOMODCACHE is DIR/modcache,
# so no module built from an older tree is ever taken from a cache;
# GONOSUMDB names llmtoolkit's modules, which no checksum database knows;
# GOWORK=off, as a user has no go.work.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
dir=${1:?usage: proxyenv.sh DIR}
mkdir -p "$dir/proxy" "$dir/modcache"
dir=$(cd "$dir" && pwd)
tree=${LLMTOOLKIT_TREE:-.}
versions=$tree/versions.txt
[[ -f "$versions" ]] || versions=$PWD/versions.txt
GOWORK= go run ./tools/modproxy -root "$tree" -versions "$versions" -out "$dir/proxy" >&2
upstream=$(go env GOPROXY)
cache="$(go env GOMODCACHE)/cache/download"
printf 'export GOWORK=off\n'
printf 'export GOPROXY=%q\n' "file://$dir/proxy,file://$cache,$upstream"
printf 'export GOMODCACHE=%q\n' "$dir/modcache"
printf 'export GONOSUMDB=%q\n' "github.com/llmtoolkit/llmtoolkit"
# The caller's flags are kept (.ci/run's -trimpath, say).
printf 'export GOFLAGS=%q\n' "${GOFLAGS:+$GOFLAGS }-mod=mod"
