#!/usr/bin/env bash
# inworkspace: exits 0 when the module in folder $1 is one of go.work's.
# A module left out of go.work (adapters/genkit: genkit's dotprompt does not
# build with the jsonschema the workspace's other modules select) is built
# as a user builds it, without go.work, with llmtoolkit's modules from the
# work tree served by scripts/proxyenv.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
[[ "$1" == . ]] && exit 0
go work edit -json | grep -qF "\"DiskPath\": \"./$1\""
